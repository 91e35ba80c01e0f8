// §4.1, §4.4: the bounds that keep verification cost bounded. Each is stated in spec/jcp.md.

/** The payload type of a grant envelope (§4.1). */
export const GRANT_PAYLOAD_TYPE = "application/vnd.jcp.grant+json";
/** The payload type of a spend receipt (§4.3). */
export const SPEND_PAYLOAD_TYPE = "application/vnd.jcp.spend+json";
/** The payload type of a revocation (§4.5). */
export const REVOCATION_PAYLOAD_TYPE = "application/vnd.jcp.revocation+json";

/** Most grants in one chain, root included (§4.4). */
export const MAX_CHAIN_LENGTH = 16;
/** Largest delegation depth a grant may state: a root of depth 15 allows 15 links below it. */
export const MAX_DEPTH = MAX_CHAIN_LENGTH - 1;
/** Largest grant payload in bytes (§4.1); a chain is therefore at most 16 × 8 KiB. */
export const MAX_GRANT_BYTES = 8192;
/** Most resource patterns in one scope (§4.2). */
export const MAX_RESOURCES = 64;
/** Most actions in one scope (§4.2). */
export const MAX_ACTIONS = 32;
/** Longest resource pattern, in bytes (§4.2). */
export const MAX_PATTERN_BYTES = 256;
/** Most segments in one resource pattern, the trailing `**` included (§4.2). */
export const MAX_SEGMENTS = 32;
/** Most grant addresses in one grant set (§4.1, grant sets). */
export const MAX_GRANT_SET = 256;
