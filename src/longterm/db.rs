//! The long-term memory database: one SQLite file per game profile (`<db_dir>/<profile>.sqlite`),
//! one `entries` table shared by the modules (module, key, JSON data, embedding), its schema
//! versioned with `PRAGMA user_version` and migrated forward on open.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::MemoryError;

/// The schema this build writes. History:
/// 1. `entries(id, module, key, created, data)`;
/// 2. adds `updated` (recency for the episodic plans), `embedding` (vectors kept with the
///    entry) and an index on (module, key).
pub const SCHEMA_VERSION: i64 = 2;

/// The schema of version 1, kept so that tests can make an old database.
pub const SCHEMA_V1: &str = "CREATE TABLE entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    module TEXT NOT NULL,
    key TEXT NOT NULL,
    created INTEGER NOT NULL,
    data TEXT NOT NULL
);";

const MIGRATE_V1_V2: &str = "ALTER TABLE entries ADD COLUMN updated INTEGER NOT NULL DEFAULT 0;
UPDATE entries SET updated = created;
ALTER TABLE entries ADD COLUMN embedding BLOB;
CREATE INDEX entries_module_key ON entries(module, key);";

/// One stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: i64,
    pub module: String,
    pub key: String,
    /// Milliseconds since the Unix epoch.
    pub created: i64,
    pub updated: i64,
    pub data: serde_json::Value,
    #[serde(skip)]
    pub embedding: Option<Vec<f32>>,
}

pub struct Db {
    conn: Connection,
    pub path: PathBuf,
}

/// `$XDG_DATA_HOME/vistawise/memory`, else `$HOME/.local/share/vistawise/memory`.
pub fn default_dir() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("vistawise").join("memory"))
}

/// The database file of a profile: `memory.db_dir` when set, else the user's data dir.
pub fn db_path(db_dir: &Path, profile: &str) -> Result<PathBuf, MemoryError> {
    let dir = if db_dir.as_os_str().is_empty() {
        default_dir().ok_or(MemoryError::NoDataDir)?
    } else {
        db_dir.to_path_buf()
    };
    if profile.is_empty()
        || !profile
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(MemoryError::BadProfile(profile.to_string()));
    }
    Ok(dir.join(format!("{profile}.sqlite")))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> MemoryError + '_ {
    move |e| MemoryError::Sql {
        path: path.to_path_buf(),
        source: e,
    }
}

pub fn encode_vectors(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn decode_vectors(b: &[u8]) -> Option<Vec<f32>> {
    if !b.len().is_multiple_of(4) {
        return None;
    }
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

impl Db {
    /// Opens (creating the folder and file) and migrates to [`SCHEMA_VERSION`]. A database
    /// written by a newer build is refused rather than guessed at.
    pub fn open(path: &Path) -> Result<Db, MemoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| MemoryError::Io {
                path: dir.to_path_buf(),
                source: e,
            })?;
        }
        let conn = Connection::open(path).map_err(sql(path))?;
        let mut db = Db {
            conn,
            path: path.to_path_buf(),
        };
        db.migrate()?;
        Ok(db)
    }

    pub fn user_version(&self) -> Result<i64, MemoryError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql(&self.path))
    }

    fn migrate(&mut self) -> Result<(), MemoryError> {
        let path = self.path.clone();
        let version = self.user_version()?;
        if version > SCHEMA_VERSION {
            return Err(MemoryError::NewerSchema {
                path,
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        let tx = self.conn.transaction().map_err(sql(&path))?;
        if version < 1 {
            tx.execute_batch(SCHEMA_V1).map_err(sql(&path))?;
        }
        if version < 2 {
            tx.execute_batch(MIGRATE_V1_V2).map_err(sql(&path))?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(sql(&path))?;
        tx.commit().map_err(sql(&path))
    }

    fn row(r: &rusqlite::Row) -> rusqlite::Result<(Entry, String)> {
        let blob: Option<Vec<u8>> = r.get(6)?;
        Ok((
            Entry {
                id: r.get(0)?,
                module: r.get(1)?,
                key: r.get(2)?,
                created: r.get(3)?,
                updated: r.get(4)?,
                data: serde_json::Value::Null,
                embedding: blob.as_deref().and_then(decode_vectors),
            },
            r.get(5)?,
        ))
    }

    fn finish(&self, (mut e, data): (Entry, String)) -> Result<Entry, MemoryError> {
        e.data = serde_json::from_str(&data).map_err(|err| MemoryError::Corrupt {
            path: self.path.clone(),
            id: e.id,
            reason: err.to_string(),
        })?;
        Ok(e)
    }

    /// Entries of a module (all when `None`), oldest first.
    pub fn list(&self, module: Option<&str>) -> Result<Vec<Entry>, MemoryError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, module, key, created, updated, data, embedding FROM entries
                 WHERE ?1 IS NULL OR module = ?1 ORDER BY updated, id",
            )
            .map_err(sql(&self.path))?;
        let rows = stmt
            .query_map(params![module], Self::row)
            .map_err(sql(&self.path))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql(&self.path))?;
        rows.into_iter().map(|r| self.finish(r)).collect()
    }

    /// Every readable entry of `module`, oldest first, with its vector: the stored one when it
    /// has `dim` values, else `embed(&item)`, saved back. An entry from before schema 2 has no
    /// vector; one stored under another embedder has one of another size, which would match
    /// nothing. An entry whose data is not a `T` is skipped with a warning naming `what`.
    pub fn list_embedded<T: serde::de::DeserializeOwned>(
        &self,
        module: &str,
        what: &str,
        dim: usize,
        mut embed: impl FnMut(&T) -> Result<Vec<f32>, MemoryError>,
    ) -> Result<Vec<(i64, T, Vec<f32>)>, MemoryError> {
        let mut out = Vec::new();
        for entry in self.list(Some(module))? {
            let Ok(item) = serde_json::from_value::<T>(entry.data) else {
                tracing::warn!("{what} {} is unreadable; skipped", entry.id);
                continue;
            };
            let vector = match entry.embedding {
                Some(v) if v.len() == dim => v,
                _ => {
                    let v = embed(&item)?;
                    self.set_embedding(entry.id, &v)?;
                    v
                }
            };
            out.push((entry.id, item, vector));
        }
        Ok(out)
    }

    pub fn get(&self, id: i64) -> Result<Option<Entry>, MemoryError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, module, key, created, updated, data, embedding FROM entries
                 WHERE id = ?1",
                params![id],
                Self::row,
            )
            .optional()
            .map_err(sql(&self.path))?;
        row.map(|r| self.finish(r)).transpose()
    }

    pub fn insert(
        &self,
        module: &str,
        key: &str,
        data: &serde_json::Value,
        embedding: Option<&[f32]>,
    ) -> Result<i64, MemoryError> {
        let now = now_ms();
        self.conn
            .execute(
                "INSERT INTO entries (module, key, created, updated, data, embedding)
                 VALUES (?1, ?2, ?3, ?3, ?4, ?5)",
                params![
                    module,
                    key,
                    now,
                    data.to_string(),
                    embedding.map(encode_vectors)
                ],
            )
            .map_err(sql(&self.path))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Replaces an entry's data (and embedding when given) and makes it the newest.
    pub fn update(
        &self,
        id: i64,
        data: &serde_json::Value,
        embedding: Option<&[f32]>,
    ) -> Result<(), MemoryError> {
        let now = now_ms();
        self.conn
            .execute(
                "UPDATE entries SET data = ?2, updated = max(?3, updated + 1),
                 embedding = coalesce(?4, embedding) WHERE id = ?1",
                params![id, data.to_string(), now, embedding.map(encode_vectors)],
            )
            .map_err(sql(&self.path))?;
        Ok(())
    }

    pub fn set_embedding(&self, id: i64, embedding: &[f32]) -> Result<(), MemoryError> {
        self.conn
            .execute(
                "UPDATE entries SET embedding = ?2 WHERE id = ?1",
                params![id, encode_vectors(embedding)],
            )
            .map_err(sql(&self.path))?;
        Ok(())
    }

    pub fn delete(&self, id: i64) -> Result<bool, MemoryError> {
        let n = self
            .conn
            .execute("DELETE FROM entries WHERE id = ?1", params![id])
            .map_err(sql(&self.path))?;
        Ok(n > 0)
    }

    /// Deletes a module's entries (all when `None`); returns how many.
    pub fn clear(&self, module: Option<&str>) -> Result<usize, MemoryError> {
        self.conn
            .execute(
                "DELETE FROM entries WHERE ?1 IS NULL OR module = ?1",
                params![module],
            )
            .map_err(sql(&self.path))
    }

    /// The raw connection (tests build old schemas with it).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_database_is_migrated_and_keeps_its_entries() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("minecraft.sqlite");
        {
            let c = Connection::open(&path).expect("open");
            c.execute_batch(SCHEMA_V1).expect("v1");
            c.execute(
                "INSERT INTO entries (module, key, created, data) VALUES ('plans', 'k', 5, '{}')",
                [],
            )
            .expect("row");
            c.pragma_update(None, "user_version", 1).expect("v");
        }
        let db = Db::open(&path).expect("migrate");
        assert_eq!(db.user_version().expect("v"), SCHEMA_VERSION);
        let all = db.list(None).expect("list");
        assert_eq!(all.len(), 1);
        assert_eq!((all[0].created, all[0].updated), (5, 5));
        assert_eq!(all[0].embedding, None);
        db.set_embedding(all[0].id, &[1.0, -2.5]).expect("emb");
        let e = db.get(all[0].id).expect("get").expect("some");
        assert_eq!(e.embedding, Some(vec![1.0, -2.5]));
        // Opening again is a no-op.
        drop(db);
        let db = Db::open(&path).expect("reopen");
        assert_eq!(db.list(None).expect("list").len(), 1);
    }

    #[test]
    fn a_newer_database_is_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("p.sqlite");
        Connection::open(&path)
            .expect("open")
            .pragma_update(None, "user_version", 99)
            .expect("v");
        let err = Db::open(&path).err().expect("refused");
        assert!(err.to_string().contains("99"), "{err}");
    }

    #[test]
    fn profiles_map_to_files_and_odd_names_are_refused() {
        let p = db_path(Path::new("/tmp/x"), "minetest").expect("path");
        assert_eq!(p, Path::new("/tmp/x/minetest.sqlite"));
        assert!(db_path(Path::new("/tmp/x"), "../etc").is_err());
    }

    #[test]
    fn list_embedded_fills_missing_and_wrong_size_vectors_once_and_skips_unreadable_data() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = Db::open(&dir.path().join("t.sqlite")).expect("db");
        let data = |s: &str| serde_json::Value::String(s.into());
        let none = db.insert("m", "k", &data("none"), None).expect("insert");
        let short = db
            .insert("m", "k", &data("short"), Some(&[1.0]))
            .expect("insert");
        let fits = db
            .insert("m", "k", &data("fits"), Some(&[7.0, 7.0]))
            .expect("insert");
        db.insert("m", "k", &serde_json::json!({"not": "a string"}), None)
            .expect("insert");
        db.insert("other", "k", &data("elsewhere"), None)
            .expect("insert");
        let mut embedded = Vec::new();
        let mut embed = |s: &String| {
            embedded.push(s.clone());
            Ok(vec![s.len() as f32, 0.0])
        };
        let listed = db.list_embedded("m", "item", 2, &mut embed).expect("list");
        let want = vec![
            (none, "none".to_string(), vec![4.0, 0.0]),
            (short, "short".to_string(), vec![5.0, 0.0]),
            (fits, "fits".to_string(), vec![7.0, 7.0]),
        ];
        assert_eq!(listed, want);
        // Saved back: a second listing embeds nothing.
        let again = db.list_embedded("m", "item", 2, &mut embed).expect("list");
        assert_eq!(again, want);
        assert_eq!(embedded, ["none", "short"]);
    }
}
