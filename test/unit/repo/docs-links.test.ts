/**
 * docs/ is self-contained: every relative link of a Markdown file under docs/
 * (and of the README, which points into docs/) names a file inside the
 * repository that exists, every `#anchor` into a Markdown page names one of
 * its headings, and no page refers to a contract or notes kept outside the
 * repository. Every page of docs/protocols/ is in its index, and the pages
 * that describe wire shapes link the schemas they describe.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { REPO_ROOT } from '../../helpers/repo.js';

const PROTOCOLS = join(REPO_ROOT, 'docs', 'protocols');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The text outside fenced code blocks (a `# comment` in a shell block is no heading, a `[x](y)` there no link). */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

function linksOf(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

const files = [...markdownFiles(join(REPO_ROOT, 'docs')), join(REPO_ROOT, 'README.md')];

test('every relative link in docs/ and the README names a file of the repository, and every anchor a heading', () => {
  const problems: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const link of linksOf(text)) {
      if (/^[a-z][a-z+.-]*:/i.test(link)) continue; // https:, mailto: — outside links are fine
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${relative(REPO_ROOT, file)}: (${link})`;
      if (target !== REPO_ROOT && !target.startsWith(REPO_ROOT + sep)) {
        problems.push(`${where} leaves the repository`);
        continue;
      }
      if (!existsSync(target)) {
        problems.push(`${where} names a file that does not exist`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
        problems.push(`${where} names no heading of ${relative(REPO_ROOT, target)}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('no page in docs/ refers to a contract or notes outside the repository', () => {
  const outside = [/contract\.md/i, /\.\.\/shared\b/, /\/work\//, /\bcontract(?:'s)? (?:section|§|\d)/i, /\bthe contract's\b/i, /\(contract\b/i];
  const problems: string[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const re of outside) if (re.test(line)) problems.push(`${relative(REPO_ROOT, file)}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
  }
  assert.deepEqual(problems, []);
});

test('docs/protocols/README.md lists every page, and the wire pages link the schemas they describe', () => {
  const index = readFileSync(join(PROTOCOLS, 'README.md'), 'utf8');
  const pages = readdirSync(PROTOCOLS).filter((f) => f.endsWith('.md') && f !== 'README.md');
  assert.deepEqual(pages.filter((p) => !index.includes(`](${p})`)), [], 'pages missing from the index');
  const wirePages = ['transports.md', 'methods.md', 'tool-protocol.md', 'notifications.md', 'ui-schema.md', 'data-flow.md', 'security.md', 'configuration.md', 'mcp.md', 'ag-ui.md'];
  for (const page of wirePages) {
    const text = readFileSync(join(PROTOCOLS, page), 'utf8');
    assert.match(text, /\]\(\.\.\/\.\.\/schemas\/[a-z-]+\.json\)/, `${page} links a schema`);
  }
});
