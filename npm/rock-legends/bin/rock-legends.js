#!/usr/bin/env node
// `npx rock-legends …`: runs this platform's executable with the same arguments, standard streams and exit code.
import { spawn } from 'node:child_process'
import { binaryPath } from '../lib/binary.js'

let file
try {
  file = binaryPath()
} catch (error) {
  console.error(`rock-legends: ${error.message}`)
  process.exit(1)
}
const child = spawn(file, process.argv.slice(2), { stdio: 'inherit' })
// Every stop request becomes the server's graceful SIGTERM. A terminal's Ctrl+C reaches both processes; the server
// then gets SIGINT and SIGTERM, two requests for the same graceful stop, where a second SIGINT would cut it short.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill('SIGTERM'))
// `npx rock-legends … &` then `kill $!` ends npm alone, which does not pass the signal on: this launcher and its server
// would run on, out of reach. Under npm exec (npx), the server stops when the process that started this one goes
// away; started otherwise (`nohup node_modules/.bin/rock-legends &`), it outlives its shell as asked.
if (process.env.npm_command === 'exec') {
  const parent = process.ppid
  setInterval(() => {
    if (process.ppid !== parent) child.kill('SIGTERM')
  }, 250).unref()
}
child.on('error', (error) => {
  console.error(`rock-legends: cannot run ${file}: ${error.message}`)
  process.exit(1)
})
child.on('exit', (code, signal) => {
  if (code !== null) process.exit(code)
  process.removeAllListeners(signal)
  process.kill(process.pid, signal)
})
