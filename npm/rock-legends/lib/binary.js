/**
 * Finds the compiled executable: it lives in the one platform package npm installed beside this one
 * (`@rock-legends/<os>-<cpu>`, an optional dependency whose `os` and `cpu` match this machine).
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** The platforms an executable is published for: `process.platform-process.arch` → package name. */
export const PLATFORM_PACKAGES = {
  'linux-x64': '@rock-legends/linux-x64',
  'linux-arm64': '@rock-legends/linux-arm64',
  'darwin-arm64': '@rock-legends/darwin-arm64',
  'darwin-x64': '@rock-legends/darwin-x64',
  'win32-x64': '@rock-legends/windows-x64',
}

/** The path of the executable for this machine; `ROCK_LEGENDS_BINARY` names another one. Throws, saying why. */
export function binaryPath() {
  const override = process.env.ROCK_LEGENDS_BINARY
  if (override) return override
  const platform = `${process.platform}-${process.arch}`
  const name = PLATFORM_PACKAGES[platform]
  if (!name)
    throw new Error(
      `no rock-legends executable is published for ${platform}; there are: ${Object.keys(PLATFORM_PACKAGES).join(', ')}`,
    )
  const file = `${name}/bin/rock-legends${process.platform === 'win32' ? '.exe' : ''}`
  try {
    return require.resolve(file)
  } catch {
    throw new Error(
      `${name} is not installed: npm installs it as an optional dependency of rock-legends on ${platform}` +
        `${process.platform === 'linux' ? ' with glibc' : ''}. Install again without --omit=optional (or --no-optional)` +
        ', and keep it in the lockfile if that was made on another platform',
    )
  }
}
