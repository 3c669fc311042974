/**
 * `--stdio "CMD …"` names a program and its arguments in one string. It is
 * split here into an argv array — never handed to a shell: no expansion, no
 * pipes, no variables. Single quotes keep text as is; double quotes keep
 * spaces and allow `\"` and `\\`; a backslash outside quotes escapes the next
 * character.
 */
export function splitCommand(command: string): string[] {
  const argv: string[] = [];
  let current = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else current += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && (command[i + 1] === '"' || command[i + 1] === '\\')) current += command[++i];
      else current += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < command.length) {
      current += command[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) argv.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote in command`);
  if (inWord) argv.push(current);
  if (argv.length === 0) throw new Error('empty command');
  return argv;
}
