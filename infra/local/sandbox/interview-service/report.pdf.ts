import type { SandboxReport } from './types';

/**
 * The report as the service's file host serves it: one page of PDF 1.4 text, written here. Helvetica is one of the
 * standard 14 fonts every reader has (ISO 32000-1 §9.6.2.2), so nothing is embedded and the file is six objects,
 * their cross-reference table (20-byte entries, §7.5.4) and the trailer.
 */
const [PAGE_TOP, LEADING, MAX_LINES, MAX_CHARS] = [736, 15, 44, 95];

/** A string literal in WinAnsi text (§7.3.4.2): `\`, `(` and `)` escaped; a character outside Latin-1 a `?`. */
const literal = (text: string) =>
  `(${text.replace(/[^\x20-\x7e\xa0-\xff]/g, '?').replace(/[\\()]/g, (c) => `\\${c}`)})`;

const bytes = (text: string) => Buffer.from(text, 'latin1');
const stream = (data: Buffer) =>
  Buffer.concat([bytes(`<< /Length ${data.length} >>\nstream\n`), data, bytes('\nendstream')]);

/** A one-page PDF of `title` and `lines`; with `minBytes`, padded by an unreferenced stream until it is larger. */
export function textPdf(title: string, lines: readonly string[], minBytes = 0): Buffer {
  const shown = lines.slice(0, MAX_LINES).map((l) => (l.length > MAX_CHARS ? `${l.slice(0, MAX_CHARS - 3)}...` : l));
  const heading = `BT /F1 16 Tf 56 ${PAGE_TOP} Td ${literal(title)} Tj /F1 11 Tf ${LEADING} TL 0 -8 Td`;
  const text = [heading, ...shown.map((line) => `T* ${literal(line)} Tj`), 'ET'].join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    stream(bytes(text)),
    `<< /Title ${literal(title)} /Producer (interview-service sandbox) >>`,
  ].map((object) => (typeof object === 'string' ? bytes(object) : object));
  const unpadded = assemble(objects);
  if (unpadded.length > minBytes) return unpadded;
  return assemble([...objects, stream(Buffer.alloc(minBytes - unpadded.length + 1, 0x20))]);
}

/** The objects numbered from 1, the cross-reference table of their byte offsets, the trailer (object 6 the Info). */
function assemble(objects: readonly Buffer[]): Buffer {
  const parts = [bytes('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n')];
  const offsets: number[] = [];
  let size = (parts[0] as Buffer).length;
  for (const [index, object] of objects.entries()) {
    const part = Buffer.concat([bytes(`${index + 1} 0 obj\n`), object, bytes('\nendobj\n')]);
    offsets.push(size);
    parts.push(part);
    size += part.length;
  }
  const entries = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n `);
  const table = ['xref', `0 ${objects.length + 1}`, '0000000000 65535 f ', ...entries, 'trailer'];
  const trailer = [`<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>`, 'startxref', String(size), '%%EOF\n'];
  return Buffer.concat([...parts, bytes([...table, ...trailer].join('\n'))]);
}

type Evaluation = { skill?: string; ai_evaluation?: { rating?: string; sub_score?: Record<string, string> } };
const listOf = (value: unknown) => (Array.isArray(value) ? (value as Evaluation[]) : []);
const rated = ({ skill, ai_evaluation: evaluation }: Evaluation) => {
  const subScores = Object.entries(evaluation?.sub_score ?? {}).map(([name, level]) => `${name} ${level}`);
  return `  ${skill ?? ''}: ${evaluation?.rating ?? ''}${subScores.length ? ` (${subScores.join(', ')})` : ''}`;
};

/** The report's file: its id, the interview, the date and the scores, and no word of who the candidate is. */
export function reportPdf(report: SandboxReport, minBytes = 0): Buffer {
  const coding = report.coding_skills_evaluation as { rating?: string } | undefined;
  const lines = [
    `Interview: ${report.interview_name ?? ''}`,
    `Date: ${report.report_date ?? ''}`,
    '',
    `AI match score: ${report.ai_match_score ?? ''} / 100`,
    `Proctoring score: ${report.proctoring_score ?? ''} / 100`,
    '',
    'Technical skills',
    ...listOf(report.technical_skills_evaluation).map(rated),
    'Soft skills',
    ...listOf(report.soft_skills_evaluation).map(rated),
    ...(coding?.rating ? ['', `Coding: ${coding.rating}`] : []),
  ];
  return textPdf(`AI interview report ${report.report_id}`, lines, minBytes);
}
