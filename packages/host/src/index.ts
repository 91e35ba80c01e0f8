// @sbx/host: see the subpath exports in package.json; one module per spec section. The root exports
// the package's one error class, so callers tell a host refusal by its class and code.
export { HostError, isHostError } from "./errors.ts";
export type { HostErrorCode } from "./errors.ts";
