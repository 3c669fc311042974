#!/usr/bin/env node
// `project-cli`, the command people run: the launcher is bin/project-cli.cjs
// (CommonJS, which the subprocess executor starts directly; see there).
import './project-cli.cjs';
