/**
 * The primary fails over under a write load: two replicas of the executable over PostgreSQL streaming replication
 * (a primary and its synchronous standby, `synchronous_commit = remote_apply`) behind HAProxy, which sends every
 * connection to the node that says it is primary (test/support/replication.ts: the steps of a Patroni cluster, done
 * by hand). The primary is killed (`pg_ctl stop -m immediate`) while clients create artists; four seconds later
 * the standby is promoted. Throughout, every create is answered 201 or 503 with `Retry-After`, never 500 and never a
 * dropped connection; the replicas reconnect by themselves and serve writes again within seconds of the promotion;
 * and every create answered 201 is there afterwards, on both replicas.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { type RunningBinary, startBinary } from '../support/binary.ts'
import {
  failoverUnderLoad,
  type ReplicatedPostgres,
  skipWithoutReplication,
  startReplicatedPostgres,
} from '../support/replication.ts'

const skip = skipWithoutReplication()
const KEY = 'failover-test-key'
const running: RunningBinary[] = []
let cluster: ReplicatedPostgres | undefined

afterEach(async () => {
  await Promise.all(running.splice(0).map((replica) => replica.stop().catch(() => 0)))
  cluster?.stop()
  cluster = undefined
})

describe.skipIf(skip)('the primary fails over to its synchronous standby under a write load', () => {
  test('503 with Retry-After while there is no primary, writes again within seconds, no acknowledged write lost', async () => {
    cluster = await startReplicatedPostgres()
    await cluster.createDatabase('rl_failover')
    const url = cluster.url('rl_failover')
    for (let i = 0; i < 2; i++)
      running.push(await startBinary(['--data', url, '--port', '0', '--api-key', KEY, '--log', 'off']))
    const result = await failoverUnderLoad({ cluster, origins: running.map((replica) => replica.url), apiKey: KEY })
    console.error(
      `failover: ${result.acknowledged} acknowledged, ${result.lost.length} lost, ${result.refused} refused with 503 ` +
        `(the slowest in ${Math.round(result.slowestRefusalMs)} ms); ` +
        `first write ${Math.round(result.firstWriteMs)} ms after the promotion, ` +
        `every replica within ${Math.round(result.everyReplicaMs)} ms`,
    )
    expect(result.unexpected).toEqual([])
    expect(result.lost).toEqual([])
    expect(result.acknowledged).toBeGreaterThan(0)
    // While there was no primary, creates were refused once the store's connection attempt (3 s) gave up: the primary
    // was away longer than that, so the clients saw 503s, not only waits.
    expect(result.refused).toBeGreaterThan(0)
    // HAProxy asks every 200 ms; the replicas' pools reconnect on their next request.
    expect(result.everyReplicaMs).toBeLessThan(10_000)
  }, 120_000)
})
