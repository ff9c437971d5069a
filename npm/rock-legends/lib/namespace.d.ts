/** The types of namespace.js, as the package's entry declares them. */
export { connect } from './index.js'
