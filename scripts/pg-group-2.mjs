// Group 2 of the PostgreSQL pass's shared-cluster suites, in one process (scripts/test-files.mjs says which and why).
// Alone, after `npm run build`, with TOOLGATE_TEST_PG_URL set: node --test scripts/pg-group-2.mjs
import { pgGroupMembers, runGroup } from './test-files.mjs';

await runGroup(pgGroupMembers(2));
