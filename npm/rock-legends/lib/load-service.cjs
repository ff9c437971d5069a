/** The bundled service, as CommonJS: `require('rock-legends')` (Jest, CommonJS projects) loads it with `require`. */
exports.loadService = async () => require('./service.cjs')
