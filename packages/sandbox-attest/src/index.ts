// @sbx/sandbox-attest: see the subpath exports in package.json; one module per spec section.
export {};
