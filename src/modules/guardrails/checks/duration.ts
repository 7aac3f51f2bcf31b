/** Duration text as used by default.jwt's maxTokenAge: an integer and one unit, `30s` `15m` `2h` `1d`. */
export const DURATION_PATTERN = /^(\d{1,9})\s*([smhd])$/;

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400 } as const;

export function parseDurationSeconds(text: string): number | undefined {
  const m = DURATION_PATTERN.exec(text.trim());
  if (!m) return undefined;
  return Number(m[1]) * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS];
}
