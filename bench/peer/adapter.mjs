// oidc-provider's adapter interface over MariaDB: every model (sessions, interactions, grants,
// codes, refresh tokens, ...) is one row of one table, its payload as JSON, with the columns
// oidc-provider looks models up by (grantId, uid, userCode) indexed. This is the shape of the
// SQL adapters in oidc-provider's own examples (one generic table), with the `mariadb` driver.
import mariadb from 'mariadb';

export const schema = `
CREATE TABLE IF NOT EXISTS oidc_models (
  id VARCHAR(255) NOT NULL,
  type VARCHAR(40) NOT NULL,
  payload JSON NOT NULL,
  grant_id VARCHAR(255) NULL,
  user_code VARCHAR(255) NULL,
  uid VARCHAR(255) NULL,
  expires_at DATETIME NULL,
  consumed_at DATETIME NULL,
  PRIMARY KEY (type, id),
  KEY oidc_models_grant (grant_id),
  KEY oidc_models_uid (type, uid),
  KEY oidc_models_user_code (type, user_code)
) ENGINE=InnoDB`;

let pool;
export function connect(options) {
  pool = mariadb.createPool({ connectionLimit: 8, ...options });
  return pool;
}

function row(r) {
  if (!r) return undefined;
  if (r.expires_at && r.expires_at.getTime() <= Date.now()) return undefined;
  const payload = typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload;
  return { ...payload, ...(r.consumed_at ? { consumed: true } : {}) };
}

export default class MariaDBAdapter {
  constructor(name) {
    this.name = name;
  }

  async upsert(id, payload, expiresIn) {
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
    await pool.query(
      `INSERT INTO oidc_models (id, type, payload, grant_id, user_code, uid, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE payload = VALUES(payload), grant_id = VALUES(grant_id),
         user_code = VALUES(user_code), uid = VALUES(uid), expires_at = VALUES(expires_at)`,
      [id, this.name, JSON.stringify(payload), payload.grantId ?? null, payload.userCode ?? null,
        payload.uid ?? null, expiresAt],
    );
  }

  async find(id) {
    const [r] = await pool.query('SELECT payload, expires_at, consumed_at FROM oidc_models WHERE type = ? AND id = ?', [this.name, id]);
    return row(r);
  }

  async findByUid(uid) {
    const [r] = await pool.query('SELECT payload, expires_at, consumed_at FROM oidc_models WHERE type = ? AND uid = ?', [this.name, uid]);
    return row(r);
  }

  async findByUserCode(userCode) {
    const [r] = await pool.query('SELECT payload, expires_at, consumed_at FROM oidc_models WHERE type = ? AND user_code = ?', [this.name, userCode]);
    return row(r);
  }

  async consume(id) {
    await pool.query('UPDATE oidc_models SET consumed_at = UTC_TIMESTAMP() WHERE type = ? AND id = ?', [this.name, id]);
  }

  async destroy(id) {
    await pool.query('DELETE FROM oidc_models WHERE type = ? AND id = ?', [this.name, id]);
  }

  async revokeByGrantId(grantId) {
    await pool.query('DELETE FROM oidc_models WHERE grant_id = ?', [grantId]);
  }
}
