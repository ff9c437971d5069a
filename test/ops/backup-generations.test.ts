import { describe, expect, test } from 'bun:test'
import { backupsToRemove, type DatedBackup } from '../../src/ops/backup-generations.ts'

const HOUR = 3_600_000

/** One backup every `everyMs` from `from` to `to`, named after its time. */
function series(from: string, to: string, everyMs: number): DatedBackup[] {
  const backups: DatedBackup[] = []
  for (let at = Date.parse(from); at <= Date.parse(to); at += everyMs)
    backups.push({ name: new Date(at).toISOString(), takenAt: new Date(at) })
  return backups
}

const kept = (backups: DatedBackup[], keep: number) => {
  const removed = new Set(backupsToRemove(backups, keep))
  return backups.filter((backup) => !removed.has(backup)).map(({ name }) => name)
}

describe('which scheduled backups are kept', () => {
  test('30 days of hourly backups: the newest 3, the newest of 7 days and of 5 weeks (Monday to Sunday)', () => {
    // 2026-11-29 is a Sunday: its week began on Monday 2026-11-23.
    const backups = series('2026-10-31T00:00:00Z', '2026-11-29T23:00:00Z', HOUR)
    expect(backups).toHaveLength(720)
    expect(kept(backups, 3)).toEqual([
      // Weekly: the newest of the weeks ending on Sunday 1, 8, 15 and 22 November.
      '2026-11-01T23:00:00.000Z',
      '2026-11-08T23:00:00.000Z',
      '2026-11-15T23:00:00.000Z',
      '2026-11-22T23:00:00.000Z',
      // Daily: the newest of each of the last 7 days.
      '2026-11-23T23:00:00.000Z',
      '2026-11-24T23:00:00.000Z',
      '2026-11-25T23:00:00.000Z',
      '2026-11-26T23:00:00.000Z',
      '2026-11-27T23:00:00.000Z',
      '2026-11-28T23:00:00.000Z',
      // The newest 3.
      '2026-11-29T21:00:00.000Z',
      '2026-11-29T22:00:00.000Z',
      '2026-11-29T23:00:00.000Z',
    ])
  })

  test('an accident noticed after two weeks can be undone: a backup from before it is still there', () => {
    const backups = series('2026-10-01T00:00:00Z', '2026-11-29T23:50:00Z', 10 * 60_000)
    const left = kept(backups, 7).map((name) => Date.parse(name))
    // Whatever happened on the 14th, a backup from the day before it remains, and one from the week before.
    expect(left.some((at) => at < Date.parse('2026-11-14T00:00:00Z') && at >= Date.parse('2026-11-07T00:00:00Z'))).toBe(
      true,
    )
    expect(left.length).toBeLessThanOrEqual(7 + 7 + 5)
  })

  test('days and weeks without a backup are skipped, not counted: a pause never empties a generation', () => {
    const backups = ['2026-01-05', '2026-03-02', '2026-06-01', '2026-09-07', '2026-11-02', '2026-11-29'].map((day) => ({
      name: day,
      takenAt: new Date(`${day}T12:00:00Z`),
    }))
    // One backup on each of six days months apart: each is the newest of its day and of its week.
    expect(kept(backups, 1)).toEqual(backups.map(({ name }) => name))
  })

  test('the newest is never removed, whatever keep says; one backup stays one', () => {
    const backups = series('2026-11-29T00:00:00Z', '2026-11-29T05:00:00Z', HOUR)
    expect(kept(backups, 0)).toEqual(['2026-11-29T05:00:00.000Z'])
    expect(kept(backups.slice(0, 1), 1)).toEqual(['2026-11-29T00:00:00.000Z'])
    expect(backupsToRemove([], 7)).toEqual([])
  })
})
