module.exports = () => globalThis.rockLegends.stop()
