// A throwaway PostgreSQL cluster for tests and benches (@sbx/host/pg startCluster): initdb in a new
// temporary folder, the server on a free loopback port (and a unix socket in that folder), run as the
// `postgres` user when invoked as root, database `sbx`, schema applied.
//   node --import tsx scripts/pg-test-cluster.ts start [PARENT]   prints SBX_TEST_PG=… and SBX_TEST_PG_DIR=…
//   node --import tsx scripts/pg-test-cluster.ts stop DIR          stops the server and removes DIR
// `eval "$(node --import tsx scripts/pg-test-cluster.ts start)"` exports both into a shell.
import { PgStore, startCluster, stopCluster } from "@sbx/host/pg";

const [cmd, arg] = process.argv.slice(2);
if (cmd === "start") {
  const c = await startCluster(arg);
  await PgStore.init(c.url);
  console.log(`export SBX_TEST_PG=${c.url}`);
  console.log(`export SBX_TEST_PG_DIR=${c.dir}`);
} else if (cmd === "stop" && arg !== undefined) {
  stopCluster({ url: "", port: 0, dir: arg });
} else {
  console.error("usage: pg-test-cluster.ts start [PARENT] | stop DIR");
  process.exit(2);
}
