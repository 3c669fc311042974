import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostnameOf } from '../../../src/mcp/mcp-http.js';
import { toolAnnotations, toolDescription } from '../../../src/mcp/mcp-server.js';
import { defaultDataDir, resolveDbPath } from '../../../src/config/data-dir.js';

test('config host and origin entries become the host names the SDK guards compare', () => {
  assert.equal(hostnameOf('mcp.example.com'), 'mcp.example.com');
  assert.equal(hostnameOf('mcp.example.com:8787'), 'mcp.example.com');
  assert.equal(hostnameOf('https://app.example.com'), 'app.example.com');
  assert.equal(hostnameOf('https://app.example.com:8443'), 'app.example.com');
  assert.equal(hostnameOf('::1'), '[::1]');
  assert.equal(hostnameOf('[::1]'), '[::1]');
  assert.equal(hostnameOf('https://*'), 'https://*');
});

test('annotations follow the whitelist; the description names the enabled skills', () => {
  assert.deepEqual(
    [toolAnnotations(['calendar.read', 'memory.read']).readOnlyHint, toolAnnotations(['calendar.read', 'memory.read']).destructiveHint],
    [true, false],
  );
  assert.equal(toolAnnotations(['calendar.read', 'memory.forget']).destructiveHint, true);
  assert.equal(toolAnnotations(['calendar.create']).readOnlyHint, false);
  assert.match(toolDescription(['calendar']), /skill:\/\/calendar\/SKILL\.md/);
  assert.doesNotMatch(toolDescription(['calendar']), /memory/);
});

test('the default data folder: TOOLGATE_HOME, else an absolute XDG_DATA_HOME/toolgate, else ~/.local/share/toolgate', () => {
  assert.equal(defaultDataDir({ TOOLGATE_HOME: '/srv/tg', XDG_DATA_HOME: '/x', HOME: '/h' }), '/srv/tg');
  assert.equal(defaultDataDir({ XDG_DATA_HOME: '/x', HOME: '/h' }), '/x/toolgate');
  assert.equal(defaultDataDir({ XDG_DATA_HOME: 'relative', HOME: '/h' }), '/h/.local/share/toolgate');
  assert.equal(defaultDataDir({ HOME: '/h' }), '/h/.local/share/toolgate');
  assert.equal(resolveDbPath(undefined, { HOME: '/h' }), '/h/.local/share/toolgate/toolgate.db');
  assert.equal(resolveDbPath('/d/x.db', { TOOLGATE_DB: '/e/y.db' }), '/d/x.db');
  assert.equal(resolveDbPath(undefined, { TOOLGATE_DB: '/e/y.db', HOME: '/h' }), '/e/y.db');
});
