// Form plumbing shared by every page: string values bound to inputs, a problem shown next to
// its field (aria-invalid, aria-describedby), focus moved to the first problem, and a server
// 400/404/409 whose `param` names a field shown next to that field too.
import type { ComponentChildren, HTMLInputTypeAttribute, InputHTMLAttributes, JSX, Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api.ts';
import { readable } from './messages.ts';

export type Values<F extends string> = Record<F, string>;
export type Problems<F extends string> = Partial<Record<F, string>>;

export interface Form<F extends string> {
  readonly values: Values<F>;
  readonly problems: Problems<F>;
  readonly formError: string | null;
  readonly busy: boolean;
  /** Bumped on each failed submit, so the form moves focus to the first problem. */
  readonly attempt: number;
  readonly idPrefix: string;
  set(field: F, value: string): void;
  reset(values: Values<F>): void;
  /**
   * Validates, then sends. `params` maps the server's field paths (`costs.prompt_tokens`,
   * `aliases[0]`) to form fields; an error naming none of them is shown for the whole form.
   */
  submit(
    validate: (values: Values<F>) => Problems<F>,
    send: (values: Values<F>) => Promise<void>,
    params: Readonly<Record<string, F>>,
  ): Promise<void>;
}

export function useForm<F extends string>(idPrefix: string, initial: Values<F>): Form<F> {
  const [values, setValues] = useState(initial);
  const [problems, setProblems] = useState<Problems<F>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [attempt, setAttempt] = useState(0);
  return {
    values,
    problems,
    formError,
    busy,
    attempt,
    idPrefix,
    set(field, value) {
      setValues((current) => ({ ...current, [field]: value }));
      if (problems[field]) setProblems((current) => ({ ...current, [field]: undefined }));
    },
    reset(next) {
      setValues(next);
      setProblems({});
      setFormError(null);
    },
    async submit(validate, send, params) {
      const found = validate(values);
      const invalid = Object.values(found).some(Boolean);
      setProblems(found);
      setFormError(null);
      if (invalid) {
        setAttempt((n) => n + 1);
        return;
      }
      setBusy(true);
      try {
        await send(values);
      } catch (error) {
        const field = error instanceof ApiFailure ? fieldOf(error.param, params) : undefined;
        if (field && error instanceof ApiFailure) setProblems({ [field]: withoutParam(error.message, error.param) } as Problems<F>);
        else setFormError(readable(error));
        setAttempt((n) => n + 1);
      } finally {
        setBusy(false);
      }
    },
  };
}

/** The form field of a server path: the longest declared path that is it or contains it. */
function fieldOf<F extends string>(param: string | null, params: Readonly<Record<string, F>>): F | undefined {
  if (!param) return undefined;
  const matches = Object.keys(params).filter((p) => param === p || param.startsWith(`${p}.`) || param.startsWith(`${p}[`));
  const best = matches.sort((a, b) => b.length - a.length)[0];
  return best === undefined ? undefined : params[best];
}

/** "budget: amount must..." next to the Budget field reads better without the path. */
function withoutParam(message: string, param: string | null): string {
  const text = param && message.startsWith(`${param}: `) ? message.slice(param.length + 2) : message;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function FormShell<F extends string>(props: {
  form: Form<F>;
  label: string;
  onSubmit: () => void;
  children: ComponentChildren;
  submitLabel: string;
  extra?: ComponentChildren;
}) {
  const ref = useRef<HTMLFormElement>(null);
  const { form } = props;
  useEffect(() => {
    if (form.attempt === 0) return;
    const target = ref.current?.querySelector<HTMLElement>('[aria-invalid="true"], .form-error');
    target?.focus();
  }, [form.attempt]);
  const onSubmit = (event: Event) => {
    event.preventDefault();
    if (!form.busy) props.onSubmit();
  };
  return (
    <form ref={ref} noValidate onSubmit={onSubmit} aria-label={props.label} class="form">
      {props.children}
      {form.formError && (
        <p class="form-error" role="alert" tabIndex={-1}>
          {form.formError}
        </p>
      )}
      <div class="actions">
        <button type="submit" class="primary" aria-disabled={form.busy}>
          {form.busy ? 'Saving…' : props.submitLabel}
        </button>
        {props.extra}
      </div>
    </form>
  );
}

/**
 * The form of a page that both creates and edits one kind of thing (`kind`: "router"): headed
 * "New router" with "Create router", or, while `editing` names one, "Edit router <name>" with
 * "Save router" and a Cancel. The heading takes focus when an Edit button is pressed (`headingRef`);
 * `note` stands between it and the form.
 */
export function CreateOrEditForm<F extends string>(props: {
  form: Form<F>;
  kind: string;
  editing: string | null;
  headingRef: Ref<HTMLHeadingElement>;
  onSubmit: () => void;
  onCancel: () => void;
  note?: ComponentChildren;
  children: ComponentChildren;
}) {
  const editing = props.editing !== null;
  const title = editing ? `Edit ${props.kind} ${props.editing}` : `New ${props.kind}`;
  return (
    <>
      <h2 ref={props.headingRef} tabIndex={-1}>
        {title}
      </h2>
      {props.note}
      <FormShell
        form={props.form}
        label={title}
        onSubmit={props.onSubmit}
        submitLabel={editing ? `Save ${props.kind}` : `Create ${props.kind}`}
        extra={
          editing && (
            <button type="button" onClick={props.onCancel}>
              Cancel
            </button>
          )
        }
      >
        {props.children}
      </FormShell>
    </>
  );
}

interface FieldProps<F extends string> {
  readonly form: Form<F>;
  readonly name: F;
  readonly label: string;
  readonly hint?: string;
  readonly required?: boolean;
}

/** Label, control, hint and problem, wired together for assistive technology. */
function Field<F extends string>(props: FieldProps<F> & { children: (aria: Record<string, string | boolean | undefined>) => JSX.Element }) {
  const id = `${props.form.idPrefix}-${props.name}`;
  const problem = props.form.problems[props.name];
  const described = [props.hint ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field${problem ? ' invalid' : ''}`}>
      <label for={id}>
        {props.label}
        {props.required && <span aria-hidden="true"> *</span>}
      </label>
      {props.children({
        id,
        name: props.name,
        'aria-invalid': problem ? 'true' : undefined,
        'aria-describedby': described || undefined,
        'aria-required': props.required ? 'true' : undefined,
      })}
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {problem && (
        <p class="problem" id={`${id}-problem`}>
          {problem}
        </p>
      )}
    </div>
  );
}

export function TextField<F extends string>(
  props: FieldProps<F> & {
    type?: HTMLInputTypeAttribute;
    placeholder?: string;
    disabled?: boolean;
    autocomplete?: string;
    inputMode?: string;
  },
) {
  return (
    <Field {...props}>
      {(aria) => {
        // Preact types <input> as a union keyed on `type`; the props are built once, then typed.
        const attributes = {
          ...aria,
          type: props.type ?? 'text',
          value: props.form.values[props.name],
          placeholder: props.placeholder,
          disabled: props.disabled,
          autocomplete: props.autocomplete ?? 'off',
          inputMode: props.inputMode,
          spellcheck: false,
          onInput: (e: Event) => props.form.set(props.name, (e.currentTarget as HTMLInputElement).value),
        } as InputHTMLAttributes<HTMLInputElement>;
        return <input {...attributes} />;
      }}
    </Field>
  );
}

export function SelectField<F extends string>(
  props: FieldProps<F> & { options: readonly (readonly [string, string])[]; disabled?: boolean },
) {
  return (
    <Field {...props}>
      {(aria) => (
        <select
          {...aria}
          value={props.form.values[props.name]}
          disabled={props.disabled}
          onChange={(e) => props.form.set(props.name, e.currentTarget.value)}
        >
          {props.options.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function CheckboxField<F extends string>(props: { form: Form<F>; name: F; label: string }) {
  const id = `${props.form.idPrefix}-${props.name}`;
  return (
    <div class="field checkbox">
      <input
        id={id}
        type="checkbox"
        checked={props.form.values[props.name] === 'true'}
        onChange={(e) => props.form.set(props.name, String(e.currentTarget.checked))}
      />
      <label for={id}>{props.label}</label>
    </div>
  );
}

/** Optional number fields: '' means "not set" (null in a merge patch). */
export function numberOrNull(text: string): number | null {
  return text.trim() === '' ? null : Number(text);
}

export function textOrNull(text: string): string | null {
  return text.trim() === '' ? null : text.trim();
}
