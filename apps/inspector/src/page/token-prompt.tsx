import { useState } from 'preact/hooks';

/** Asked when the server answers 401: the token is kept for this tab (sessionStorage). */
export function TokenPrompt({ onToken }: { onToken: (token: string) => void }) {
  const [value, setValue] = useState('');
  return (
    <form
      class="token"
      onSubmit={(event) => {
        event.preventDefault();
        if (value.trim() !== '') onToken(value.trim());
      }}
    >
      <h2>This server needs a token</h2>
      <p>Paste a bearer token of the tenant whose calls you want to see. It is kept for this tab only.</p>
      <input
        type="password"
        name="token"
        aria-label="Token"
        value={value}
        onInput={(event) => setValue(event.currentTarget.value)}
      />
      <button type="submit">Open</button>
    </form>
  );
}
