/**
 * bench/cycle.ts turns the main thread's stamps (stdin reads, BEGIN, end of
 * COMMIT, stdout writes) into phases: per sequential call, and per group
 * commit under load with the host's turnaround between a group's first
 * write and the next request. Checked on stamps whose phases are known.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupPhases, sequentialPhases } from '../../../bench/cycle.js';
import type { Stamp } from '../../../bench/cycle-probe.js';

test('sequential: read → BEGIN, BEGIN → end of COMMIT, end of COMMIT → the answer written', () => {
  const stamps: Stamp[] = [];
  for (let i = 0; i < 3; i++) {
    const t = i * 10;
    stamps.push(['d', t, 900], ['B', t + 0.2], ['C', t + 0.8], ['w', t + 1.0, 2000]);
  }
  // A small read (a notification's ack, say) is not a request's start.
  stamps.splice(1, 0, ['d', 0.1, 40]);
  const p = sequentialPhases(stamps);
  assert.equal(p.calls, 3);
  assert.ok(Math.abs(p.readToBegin - 0.2) < 1e-9);
  assert.ok(Math.abs(p.beginToCommit - 0.6) < 1e-9);
  assert.ok(Math.abs(p.commitToWrite - 0.2) < 1e-9);
  assert.ok(Math.abs(p.inDaemon - 1.0) < 1e-9);
});

test('groups: the commit, the answers, the host turnaround and the next admission, one after the other', () => {
  const stamps: Stamp[] = [];
  // Four groups, 4 ms apart: BEGIN at +0, COMMIT ends at +2, first write at +2.5, next request at +3.
  for (let g = 0; g < 4; g++) {
    const t = g * 4;
    stamps.push(['B', t], ['C', t + 2], ['w', t + 2.5, 9000], ['w', t + 2.7, 9000], ['d', t + 3, 900], ['d', t + 3.2, 900]);
  }
  const p = groupPhases(stamps, 32);
  assert.equal(p.groups, 4);
  assert.equal(p.callsPerGroup, 8);
  assert.equal(p.beginToCommit, 2);
  assert.equal(p.commitToFirstWrite, 0.5);
  assert.equal(p.hostTurnaround, 0.5);
  assert.equal(p.nextReadToBegin, 1);
  assert.equal(p.cycle, 4);
});
