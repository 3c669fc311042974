/**
 * A token in the forms that once got past the scan (contract section 7):
 * the unit tests of secret-scan.ts and the e2e tests of every transport use the same twelve.
 */

/** The twelve ways red-team passes got a token past the scan: wrapped, spaced, invisible or control characters, padded. */
export function splitVariants(token: string): Record<string, string> {
  const [h, p, s] = token.split('.') as [string, string, string];
  const pad = (seg: string) => seg + '='.repeat((4 - (seg.length % 4)) % 4 || 2);
  const wrap = (text: string, cols: number, nl: string) => text.match(new RegExp(`.{1,${cols}}`, 'gs'))!.join(nl);
  return {
    'a 76-column wrap': wrap(token, 76, '\n'),
    'a CRLF wrap at 64': wrap(token, 64, '\r\n'),
    'a space after each dot': `${h}. ${p}. ${s}`,
    'a zero-width space after each dot': `${h}.\u200b${p}.\u200b${s}`,
    'a zero-width space inside the header': `${h.slice(0, 7)}\u200b${h.slice(7)}.${p}.${s}`,
    '== padding on every segment': `${pad(h)}.${pad(p)}.${pad(s)}`,
    'a word joiner in the payload': `${h}.${p.slice(0, 5)}\u2060${p.slice(5)}.${s}`,
    'a soft hyphen in the signature': `${h}.${p}.${s.slice(0, 9)}\u00ad${s.slice(9)}`,
    'tabs and spaces around the dots': `${h} \t. ${p} .\t${s}`,
    'a BOM, an NBSP and a tag character': `${h.slice(0, 4)}\ufeff${h.slice(4)}.\u00a0${p}.${s.slice(0, 3)}\u{e0020}${s.slice(3)}`,
    'a NEL (U+0085) after each dot': `${h}.\u0085${p}.\u0085${s}`,
    'C0 and C1 control characters inside the segments': `${h.slice(0, 6)}\u0001${h.slice(6)}.${p.slice(0, 4)}\u007f${p.slice(4)}.${s.slice(0, 5)}\u009b${s.slice(5)}`,
  };
}

