import type { ComponentChildren } from 'preact';

/** A labelled input with its error beside it, announced to screen readers. */
export function Field(props: {
  id: string;
  label: string;
  error?: string | undefined;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class={`field${props.error ? ' has-error' : ''}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && <small id={`${props.id}-hint`}>{props.hint}</small>}
      {props.error && (
        <p class="error" id={`${props.id}-error`} role="alert">
          {props.error}
        </p>
      )}
    </div>
  );
}

export type CheckLine = { status: 'pass' | 'fail' | 'info'; what: string; fix?: string };

const MARK = { pass: '✓', fail: '✗', info: '–' } as const;

/** The doctor's checks, each with what to do about a failure. */
export function Checks(props: { lines: CheckLine[]; label?: string }) {
  return (
    <ul class="checks" aria-label={props.label ?? "The doctor's checks"}>
      {props.lines.map((line) => (
        <li class={line.status} key={line.what}>
          <span aria-hidden="true">{MARK[line.status]}</span> <span class="sr-only">{line.status}: </span>
          {line.what}
          {line.fix && <div class="fix">→ {line.fix}</div>}
        </li>
      ))}
    </ul>
  );
}

export function Status(props: { text: string | undefined; kind?: 'error' | 'ok' }) {
  return (
    <p class={`status ${props.kind ?? ''}`} role="status" aria-live="polite">
      {props.text ?? ''}
    </p>
  );
}
