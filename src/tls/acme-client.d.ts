// acme-client's modules imported one by one, typed by its own declarations: its index also loads node-forge, for a
// legacy API this project does not use, which would add about a third to what the library weighs in the executable.
declare module 'acme-client/src/client.js' {
  const Client: typeof import('acme-client').Client
  export default Client
}
declare module 'acme-client/src/crypto/index.js' {
  const crypto: typeof import('acme-client').crypto
  export default crypto
}
declare module 'acme-client/src/axios.js' {
  const axios: typeof import('acme-client').axios
  export default axios
}
// The build of axios acme-client requires: imported by its ESM name, axios would be bundled twice.
declare module 'axios/dist/node/axios.cjs' {
  const axios: typeof import('axios').default
  export default axios
}
