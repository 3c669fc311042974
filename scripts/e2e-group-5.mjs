// Group 5 of the light outside-in suites, in one process (scripts/test-files.mjs says which and why).
// Alone, after `npm run build`: node --test scripts/e2e-group-5.mjs
import { groupMembers, runGroup } from './test-files.mjs';

await runGroup(groupMembers(5));
