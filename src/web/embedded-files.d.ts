// Bun embeds a file imported `with { type: 'text' }` in the bundle and gives its text. Without these, TypeScript
// would look for the types of a JavaScript module, or find none for a stylesheet or a picture.
declare module '*/pages.js' {
  const text: string
  export default text
}

declare module '*/live.js' {
  const text: string
  export default text
}

declare module '*.css' {
  const text: string
  export default text
}

declare module '*.svg' {
  const text: string
  export default text
}
