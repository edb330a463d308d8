/**
 * The report of a Keycloak import (issue 10 item 5): element by element, what was imported as is,
 * mapped to something Realmgate has, or skipped, with the reason. Printed by the CLI, returned as JSON
 * by the admin API.
 */
export type Outcome = 'imported' | 'mapped' | 'skipped';

export interface ReportLine {
  /** e.g. "client web-app", "user alice", "realm setting accessCodeLifespan". */
  element: string;
  outcome: Outcome;
  reason?: string;
}

export interface RealmReport {
  realm: string;
  /** imported: created; overwritten: replaced; unchanged: existed and --if-exists skip; failed: nothing stored. */
  status: 'imported' | 'overwritten' | 'unchanged' | 'skipped' | 'failed';
  reason?: string;
  lines: ReportLine[];
  counts: Record<Outcome, number>;
}

export interface ImportReport {
  realms: RealmReport[];
  /** True when a realm failed: the caller exits 1 (CLI) or answers 400 (API). */
  failed: boolean;
}

export class RealmReportBuilder {
  readonly lines: ReportLine[] = [];
  constructor(readonly realm: string) {}
  imported(element: string, reason?: string): void {
    this.lines.push({ element, outcome: 'imported', ...(reason ? { reason } : {}) });
  }
  mapped(element: string, reason: string): void {
    this.lines.push({ element, outcome: 'mapped', reason });
  }
  skipped(element: string, reason: string): void {
    this.lines.push({ element, outcome: 'skipped', reason });
  }
  /** A line made earlier (an import checks its entries before it writes them, and reports in the file's order). */
  add(line: ReportLine): void {
    this.lines.push({ ...line });
  }
  build(status: RealmReport['status'], reason?: string): RealmReport {
    const counts: Record<Outcome, number> = { imported: 0, mapped: 0, skipped: 0 };
    for (const l of this.lines) counts[l.outcome]++;
    return { realm: this.realm, status, ...(reason ? { reason } : {}), lines: status === 'failed' ? [] : this.lines, counts };
  }
}

/**
 * Plain text, one line per element, grouped by realm. Names and reasons come from the file (a username
 * with a newline, a client id with an ESC sequence): `escape` makes them safe for where the text goes
 * (the CLI passes its terminalSafe), so that one entry cannot forge lines or drive a terminal.
 */
export function formatReport(report: ImportReport, escape: (text: string) => string = (text) => text): string {
  const out: string[] = [];
  for (const r of report.realms) {
    out.push(`realm ${escape(r.realm)}: ${r.status}${r.reason ? ` (${escape(r.reason)})` : ''}`);
    for (const l of r.lines) out.push(`  ${l.outcome.padEnd(8)} ${escape(l.element)}${l.reason ? ` - ${escape(l.reason)}` : ''}`);
    if (r.status !== 'failed' && r.status !== 'skipped' && r.status !== 'unchanged') {
      out.push(`  (${r.counts.imported} imported, ${r.counts.mapped} mapped, ${r.counts.skipped} skipped)`);
    }
  }
  return out.join('\n') + '\n';
}
