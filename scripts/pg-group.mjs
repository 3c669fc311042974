// The PostgreSQL pass's shared-cluster suites, in one process (scripts/test-files.mjs, PG_SUITES).
// Alone, after `npm run build`, with TOOLGATE_TEST_PG_URL set: node --test scripts/pg-group.mjs
import { PG_SUITES, runGroup } from './test-files.mjs';

await runGroup(PG_SUITES);
