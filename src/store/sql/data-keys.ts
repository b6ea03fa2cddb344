/** The data key statements both SQL stores share, written once with `?` (see dialect.ts). */

export const LIST_DATA_KEYS = "SELECT id, kek_id, wrapped, created_at FROM data_keys ORDER BY created_at, id";

/** Parameters: id, kek_id, wrapped, created_at. */
export const INSERT_DATA_KEY = "INSERT INTO data_keys (id, kek_id, wrapped, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";

export const DELETE_DATA_KEYS = "DELETE FROM data_keys";

/** Parameters: kek_id, wrapped, id. */
export const REWRAP_DATA_KEY = "UPDATE data_keys SET kek_id = ?, wrapped = ? WHERE id = ?";
