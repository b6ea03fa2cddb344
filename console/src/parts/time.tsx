/** A time in the viewer's time zone, relative where recent, with the exact time (and zone) on hover. */
const exact = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" });
const short = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

export function Time(props: { at: number | null | undefined; now?: number }) {
  if (props.at === null || props.at === undefined || !Number.isFinite(props.at)) return <span class="time">—</span>;
  const d = new Date(props.at);
  const ago = (props.now ?? Date.now()) - props.at;
  let text = short.format(d);
  if (ago >= 0 && ago < 60_000) text = relative.format(-Math.round(ago / 1000), "second");
  else if (ago >= 0 && ago < 3_600_000) text = relative.format(-Math.round(ago / 60_000), "minute");
  else if (ago >= 0 && ago < 86_400_000) text = relative.format(-Math.round(ago / 3_600_000), "hour");
  return (
    <time class="time" dateTime={d.toISOString()} title={exact.format(d)}>
      {text}
    </time>
  );
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}
