/** Columns padded to their widest cell, two spaces apart; a header line first. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  if (!rows.length) return '(none)';
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

export const isoOrNull = (date: Date | null | undefined): string | null => date?.toISOString() ?? null;

/** `12.5 / 100 (13%)` */
export function ofLimit(used: number, limit: number): string {
  const share = limit > 0 ? ` (${Math.round((used / limit) * 100)}%)` : '';
  return `${round(used)} / ${round(limit)}${share}`;
}

export const round = (n: number): string => String(Math.round(n * 1e6) / 1e6);
