// Bun embeds a file imported `with { type: 'file' }` in the executable and gives its path. Without this, TypeScript
// would look for the types of the JavaScript module instead.
declare module '*/dist/browser/standalone.js' {
  const path: string
  export default path
}
