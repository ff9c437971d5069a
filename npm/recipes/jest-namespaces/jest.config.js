module.exports = {
  globalSetup: './global-setup.js',
  globalTeardown: './global-teardown.js',
}
