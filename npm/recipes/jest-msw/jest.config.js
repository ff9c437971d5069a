module.exports = {
  testEnvironment: 'jsdom',
  // What jsdom lacks and MSW needs (fetch and its classes, streams, TextEncoder): MSW's own polyfills for Jest.
  setupFiles: ['./jest.polyfills.js'],
  // jsdom's default conditions pick the browser build of a package: msw/node has none.
  testEnvironmentOptions: { customExportConditions: [''] },
}
