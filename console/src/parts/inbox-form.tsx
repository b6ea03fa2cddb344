/**
 * The form generated from a tool's recorded JSON Schema (inbox-schema.ts): one labelled input per
 * field, nested objects as fieldsets, arrays of simple values as lists, anything else as a JSON
 * textarea; each field's error (the page's check, or the server's refusal naming it) next to it.
 */
import { counted } from "./count.js";
import { emptyItem, escape, kindOf, properties, required, type Draft, type Errors, type Schema } from "./inbox-schema.js";

interface FieldProps {
  schema: Schema;
  draft: Draft;
  at: string;
  label: string;
  needed: boolean;
  errors: Errors;
  idBase: string;
  onChange: (d: Draft) => void;
}

const fieldId = (idBase: string, at: string) => `${idBase}${encodeURIComponent(at || "/")}`;

export function SchemaForm(props: { schema: Schema; draft: Draft; errors: Errors; idBase: string; onChange: (d: Draft) => void }) {
  return <Field schema={props.schema} draft={props.draft} at="" label="arguments" needed errors={props.errors} idBase={props.idBase} onChange={props.onChange} />;
}

function FieldError(props: { id: string; error: string | undefined }) {
  return props.error ? (
    <span class="field-error" id={props.id} role="alert">
      {props.error}
    </span>
  ) : null;
}

function Hint(props: { schema: Schema }) {
  const s = props.schema;
  const bits: string[] = [];
  if (typeof s.minimum === "number") bits.push(`≥ ${s.minimum}`);
  if (typeof s.maximum === "number") bits.push(`≤ ${s.maximum}`);
  if (typeof s.minLength === "number") bits.push(`at least ${counted(s.minLength, "character")}`);
  if (typeof s.maxLength === "number") bits.push(`at most ${counted(s.maxLength, "character")}`);
  if (typeof s.pattern === "string") bits.push(`matching ${s.pattern}`);
  const text = [typeof s.description === "string" ? s.description : "", bits.join(", ")].filter((x) => x !== "").join(" · ");
  return text ? <span class="field-hint">{text}</span> : null;
}

function Field(p: FieldProps) {
  const id = fieldId(p.idBase, p.at);
  const errId = `${id}-error`;
  const error = p.errors[p.at];
  const title = `${p.label}${p.needed ? "" : " (optional)"}`;
  const invalid = error ? true : undefined;
  const d = p.draft;
  switch (d.kind) {
    case "object": {
      const props = properties(p.schema);
      const req = required(p.schema);
      return (
        <fieldset class="schema-object">
          {p.at === "" ? null : <legend>{title}</legend>}
          <FieldError id={errId} error={error} />
          {Object.entries(props).map(([k, s]) => (
            <Field
              key={k}
              schema={s}
              draft={d.fields[k] ?? { kind: "json", text: "" }}
              at={`${p.at}/${escape(k)}`}
              label={k}
              needed={req.has(k)}
              errors={p.errors}
              idBase={p.idBase}
              onChange={(x) => p.onChange({ ...d, fields: { ...d.fields, [k]: x } })}
            />
          ))}
        </fieldset>
      );
    }
    case "text": {
      const numeric = kindOf(p.schema) !== "string";
      return (
        <div class="schema-field">
          <label for={id}>{title}</label>
          <input
            id={id}
            value={d.text}
            inputMode={numeric ? (kindOf(p.schema) === "integer" ? "numeric" : "decimal") : undefined}
            aria-invalid={invalid}
            aria-describedby={error ? errId : undefined}
            onInput={(e) => p.onChange({ kind: "text", text: e.currentTarget.value })}
          />
          <Hint schema={p.schema} />
          <FieldError id={errId} error={error} />
        </div>
      );
    }
    case "bool":
      return (
        <div class="schema-field schema-bool">
          <label>
            <input type="checkbox" id={id} checked={d.value === true} aria-invalid={invalid} aria-describedby={error ? errId : undefined} onChange={(e) => p.onChange({ kind: "bool", value: e.currentTarget.checked })} /> {title}
          </label>
          <FieldError id={errId} error={error} />
        </div>
      );
    case "enum": {
      const options = (p.schema.enum as unknown[] | undefined) ?? [];
      return (
        <div class="schema-field">
          <label for={id}>{title}</label>
          <select id={id} value={String(d.index)} aria-invalid={invalid} aria-describedby={error ? errId : undefined} onChange={(e) => p.onChange({ kind: "enum", index: Number(e.currentTarget.value) })}>
            <option value="-1">{p.needed ? "— choose —" : "— none —"}</option>
            {options.map((o, i) => (
              <option key={i} value={String(i)}>
                {typeof o === "string" ? o : JSON.stringify(o)}
              </option>
            ))}
          </select>
          <FieldError id={errId} error={error} />
        </div>
      );
    }
    case "list": {
      const items = (p.schema.items ?? {}) as Schema;
      return (
        <fieldset class="schema-list">
          <legend>{title}</legend>
          <FieldError id={errId} error={error} />
          {d.items.map((item, i) => (
            <div class="schema-item" key={i}>
              <Field schema={items} draft={item} at={`${p.at}/${i}`} label={`${p.label} ${i + 1}`} needed errors={p.errors} idBase={p.idBase} onChange={(x) => p.onChange({ kind: "list", items: d.items.map((y, j) => (j === i ? x : y)) })} />
              <button type="button" class="link" onClick={() => p.onChange({ kind: "list", items: d.items.filter((_, j) => j !== i) })}>
                Remove {p.label} {i + 1}
              </button>
            </div>
          ))}
          <button type="button" onClick={() => p.onChange({ kind: "list", items: [...d.items, emptyItem(p.schema)] })}>
            Add to {p.label}
          </button>
        </fieldset>
      );
    }
    case "json":
      return (
        <div class="schema-field">
          <label for={id}>{title} (JSON)</label>
          <textarea id={id} rows={3} value={d.text} aria-invalid={invalid} aria-describedby={error ? errId : undefined} onInput={(e) => p.onChange({ kind: "json", text: e.currentTarget.value })} />
          <FieldError id={errId} error={error} />
        </div>
      );
  }
}
