// Run by hostile.test.ts as its own process, so that its max RSS is the import's alone: imports the
// layout or archive argv[3] into the store argv[2], unpacking every image (a layer bounded at 512 MiB
// of tar stream; argv[4], when given, is a staged-archive bound in bytes), and prints
// {code, maxRssKiB}.
import { isHostError } from "../../src/errors.ts";
import { ensureRootfs, importImage, ImageStore, type ImageLimits } from "../../src/image/index.ts";

const limits: ImageLimits = {
  maxLayerBytes: 512 << 20,
  maxImageBytes: 16 * 1024 ** 3,
  maxStagedBytes: process.argv[4] === undefined ? 16 * 1024 ** 3 : Number(process.argv[4]),
};
const [storeDir, layout] = process.argv.slice(2) as [string, string];
const store = ImageStore.open(storeDir, true);
let code = "ok";
try {
  importImage(store, layout, undefined, { verify: (hex) => void ensureRootfs(store, hex, limits), limits });
} catch (e) {
  code = isHostError(e) ? e.code : `uncoded: ${String(e)}`;
}
process.stdout.write(JSON.stringify({ code, maxRssKiB: process.resourceUsage().maxRSS }));
