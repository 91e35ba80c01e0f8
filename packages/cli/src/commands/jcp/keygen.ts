// `jcp keygen`: a principal's key (issuer, holder, minter).
import { keygenCommand } from "../../keygen.ts";

export const command = keygenCommand("jcp", "principal (issuer, holder or minter)");
