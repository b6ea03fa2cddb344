import { Link } from "../router.js";

export function NotFoundPage(props: { path: string }) {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        The console has no page at <code>{props.path}</code>. <Link href="/runs">See the runs</Link>.
      </p>
    </section>
  );
}
