/** Sign-in with a token: pasted here, or carried by the one-time URL `stead serve` prints. */
import { useState } from "preact/hooks";

export function SignInPage(props: { onToken: (token: string) => void; error?: string }) {
  const [token, setToken] = useState("");
  return (
    <main class="sign-in" id="main">
      <h1>Stead</h1>
      <p>Open the sign-in URL that <code>stead serve</code> printed, or paste a token (<code>stead tokens create</code>).</p>
      {props.error ? (
        <p class="error" role="alert">
          Not signed in: {props.error}
        </p>
      ) : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim() !== "") props.onToken(token.trim());
        }}
      >
        <label>
          Token
          <input type="password" autoComplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
