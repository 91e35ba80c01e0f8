// `sbx keygen`: a steward or host key.
import { keygenCommand } from "../../keygen.ts";

export const command = keygenCommand("sbx", "steward or host");
