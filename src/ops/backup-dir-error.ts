/**
 * Raised when the scheduled backups' directory cannot be used safely: the server says so in one line at start and
 * exits 2. In a module of its own, so that the command line tells it apart without loading the backups.
 */
export class BackupDirError extends Error {
  override name = 'BackupDirError'
}
