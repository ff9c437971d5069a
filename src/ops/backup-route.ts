import { Elysia } from 'elysia'
import type { authGuard } from '../auth/guard.ts'
import { conditionsWithoutTags } from '../http/conditional.ts'
import { Problem } from '../http/problem.ts'
import type { StoreKind } from '../ops/backup-format.ts'
import { onlineBackup } from '../ops/online-backup.ts'
import type { Store } from '../store/store.ts'

const encoder = new TextEncoder()

/**
 * `GET /__admin/backup`: a backup of the running server's store, streamed as the backup file's text (what
 * `rock-legends backup` asks of a server that owns its data file, and what scheduled backups write). Service keys only;
 * one at a time (a second gets 409 while one is being taken), as each holds a snapshot of the whole store.
 */
export function backupRoutes(store: Store, kind: StoreKind, guard: ReturnType<typeof authGuard>) {
  let busy = false
  const routes = new Elysia({ name: 'admin-backup' }).use(guard)
  return routes.onBeforeHandle(conditionsWithoutTags(() => routes.routes)).get(
    '/__admin/backup',
    async () => {
      if (busy) throw new Problem('conflict', 'A backup is being taken: wait for it to finish, then ask again.')
      busy = true
      try {
        const { takenAt, pieces } = await onlineBackup(store, kind)
        const body = new ReadableStream({
          // A piece (a thousand records) per turn of the event loop: a fast reader would otherwise have the pieces
          // made one after another in microtasks, the whole store's text in one pause for everyone else.
          async pull(controller) {
            await new Promise((resolve) => setImmediate(resolve))
            const next = pieces.next()
            if (next.done) {
              busy = false
              controller.close()
            } else controller.enqueue(encoder.encode(next.value))
          },
          cancel() {
            busy = false
          },
        })
        const stamp = takenAt.replaceAll(/[-:]|\.\d+/g, '')
        return new Response(body, {
          headers: {
            'content-type': 'application/json',
            'content-disposition': `attachment; filename="rock-legends-${stamp}.json"`,
            'cache-control': 'no-store',
          },
        })
      } catch (error) {
        busy = false
        throw error
      }
    },
    { service: true, detail: { hide: true } },
  )
}
