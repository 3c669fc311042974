// Group 1 of the light outside-in suites, in one process (scripts/test-files.mjs says which and why).
// Alone, after `npm run build`: node --test scripts/e2e-group-1.mjs
import { groupMembers, runGroup } from './test-files.mjs';

await runGroup(groupMembers(1));
