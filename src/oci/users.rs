//! Users and groups of an image (its `/etc/passwd` and `/etc/group`), and
//! the user a container runs as, resolved the way container runtimes do.

use serde::{Deserialize, Serialize};

/// One line of `/etc/passwd`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasswdEntry {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: String,
    pub shell: String,
}

/// One line of `/etc/group`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupEntry {
    pub name: String,
    pub gid: u32,
    pub members: Vec<String>,
}

/// The image's user and group tables (empty when the files are missing).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Users {
    pub passwd: Vec<PasswdEntry>,
    pub groups: Vec<GroupEntry>,
    /// Whether the image has an `/etc/passwd` at all.
    pub has_passwd: bool,
}

/// The user a process runs as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    /// The name from `/etc/passwd`, when the uid has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub uid: u32,
    pub gid: u32,
    /// HOME: the passwd entry's, `/` without one (as runc sets it).
    pub home: String,
    /// Supplementary groups: the groups of `/etc/group` that list the user.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<u32>,
}

impl User {
    /// The primary group and the supplementary ones, without repeats.
    pub fn gids(&self) -> Vec<u32> {
        let mut g = vec![self.gid];
        for x in &self.groups {
            if !g.contains(x) {
                g.push(*x);
            }
        }
        g
    }
}

impl Users {
    /// Parses the two files; lines that do not parse are skipped, as libc
    /// skips them.
    pub fn parse(passwd: Option<&[u8]>, group: Option<&[u8]>) -> Users {
        let lines = |b: Option<&[u8]>| -> Vec<Vec<String>> {
            let text = String::from_utf8_lossy(b.unwrap_or_default()).into_owned();
            text.lines()
                .map(str::trim_end)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(|l| l.split(':').map(str::to_string).collect())
                .collect()
        };
        let passwd_entries = lines(passwd)
            .into_iter()
            .filter_map(|f| {
                if f.len() < 4 {
                    return None;
                }
                Some(PasswdEntry {
                    name: f[0].clone(),
                    uid: f[2].parse().ok()?,
                    gid: f[3].parse().ok()?,
                    home: f.get(5).cloned().unwrap_or_default(),
                    shell: f.get(6).cloned().unwrap_or_default(),
                })
            })
            .collect();
        let groups = lines(group)
            .into_iter()
            .filter_map(|f| {
                if f.len() < 3 {
                    return None;
                }
                Some(GroupEntry {
                    name: f[0].clone(),
                    gid: f[2].parse().ok()?,
                    members: f
                        .get(3)
                        .map(|m| {
                            m.split(',')
                                .map(str::trim)
                                .filter(|s| !s.is_empty())
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default(),
                })
            })
            .collect();
        Users {
            passwd: passwd_entries,
            groups,
            has_passwd: passwd.is_some(),
        }
    }

    pub fn by_name(&self, name: &str) -> Option<&PasswdEntry> {
        self.passwd.iter().find(|p| p.name == name)
    }

    pub fn by_uid(&self, uid: u32) -> Option<&PasswdEntry> {
        self.passwd.iter().find(|p| p.uid == uid)
    }

    pub fn group_by_name(&self, name: &str) -> Option<&GroupEntry> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// Resolves the config's `User` (`""`, `name`, `uid`, `name:group`,
    /// `uid:gid` and mixes) as runc does: a name must be in `/etc/passwd`
    /// (a group name in `/etc/group`), a number need not be; the group
    /// defaults to the passwd entry's, else 0; supplementary groups are
    /// those of `/etc/group` listing the user's name.
    pub fn resolve(&self, spec: &str) -> Result<User, String> {
        let (u, g) = match spec.split_once(':') {
            Some((u, g)) => (u, Some(g)),
            None => (spec, None),
        };
        let entry = if u.is_empty() {
            self.by_uid(0)
        } else if let Ok(uid) = u.parse::<u32>() {
            self.by_uid(uid)
        } else {
            Some(self.by_name(u).ok_or_else(|| {
                if self.has_passwd {
                    format!("the user `{u}` is not in the image's /etc/passwd")
                } else {
                    format!("the user `{u}` is named, but the image has no /etc/passwd")
                }
            })?)
        };
        let uid = match u.parse::<u32>() {
            Ok(n) => n,
            Err(_) => entry.map_or(0, |e| e.uid),
        };
        let gid = match g {
            None | Some("") => entry.map_or(0, |e| e.gid),
            Some(g) => match g.parse::<u32>() {
                Ok(n) => n,
                Err(_) => self
                    .group_by_name(g)
                    .map(|e| e.gid)
                    .ok_or_else(|| format!("the group `{g}` is not in the image's /etc/group"))?,
            },
        };
        Ok(self.user(uid, gid, entry))
    }

    /// The user a pod runs as: `run_as_user` and `run_as_group` replace the
    /// image's (the gid of the passwd entry of the uid, else 0, when only
    /// the uid is given).
    pub fn resolve_ids(
        &self,
        image: &User,
        run_as_user: Option<u32>,
        run_as_group: Option<u32>,
    ) -> User {
        match run_as_user {
            None => {
                let mut u = image.clone();
                if let Some(g) = run_as_group {
                    u.gid = g;
                }
                u
            }
            Some(uid) => {
                let entry = self.by_uid(uid);
                let gid = run_as_group.unwrap_or_else(|| entry.map_or(0, |e| e.gid));
                self.user(uid, gid, entry)
            }
        }
    }

    fn user(&self, uid: u32, gid: u32, entry: Option<&PasswdEntry>) -> User {
        let name = entry.map(|e| e.name.clone());
        let mut groups: Vec<u32> = match &name {
            Some(n) => self
                .groups
                .iter()
                .filter(|g| g.members.iter().any(|m| m == n))
                .map(|g| g.gid)
                .filter(|g| *g != gid)
                .collect(),
            None => Vec::new(),
        };
        groups.sort_unstable();
        groups.dedup();
        User {
            name,
            uid,
            gid,
            home: entry
                .map(|e| e.home.clone())
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "/".to_string()),
            groups,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &[u8] = b"root:x:0:0:root:/root:/bin/sh\n# comment\nnode:x:1000:1000::/home/node:/bin/sh\nbroken\napp:x:1001:1001:app:/srv:/bin/false\n";
    const GROUP: &[u8] = b"root:x:0:\nnode:x:1000:\naudio:x:29:node,app\nstaff:x:50:app\n";

    #[test]
    fn users_resolve_as_runc_resolves_them() {
        let u = Users::parse(Some(PASSWD), Some(GROUP));
        let node = u.resolve("node").unwrap();
        assert_eq!(
            node,
            User {
                name: Some("node".into()),
                uid: 1000,
                gid: 1000,
                home: "/home/node".into(),
                groups: vec![29]
            }
        );
        assert_eq!(u.resolve("1000").unwrap(), node);
        let root = u.resolve("").unwrap();
        assert_eq!((root.uid, root.gid, root.home.as_str()), (0, 0, "/root"));
        let x = u.resolve("4242").unwrap();
        assert_eq!(
            (x.uid, x.gid, x.name, x.home.as_str()),
            (4242, 0, None, "/")
        );
        let a = u.resolve("app:staff").unwrap();
        assert_eq!((a.uid, a.gid, a.groups.clone()), (1001, 50, vec![29]));
        assert_eq!(a.gids(), vec![50, 29]);
        assert_eq!(u.resolve("node:7").unwrap().gid, 7);
        assert!(u
            .resolve("nobody")
            .unwrap_err()
            .contains("not in the image's /etc/passwd"));
        assert!(u.resolve("node:wheel").unwrap_err().contains("/etc/group"));
        let none = Users::parse(None, None);
        assert!(none.resolve("node").unwrap_err().contains("no /etc/passwd"));
        assert_eq!(none.resolve("1000").unwrap().uid, 1000);
    }

    #[test]
    fn pod_ids_replace_the_image_user() {
        let u = Users::parse(Some(PASSWD), Some(GROUP));
        let image = u.resolve("node").unwrap();
        assert_eq!(u.resolve_ids(&image, None, None), image);
        let r = u.resolve_ids(&image, Some(1001), None);
        assert_eq!((r.uid, r.gid), (1001, 1001));
        let r = u.resolve_ids(&image, Some(5000), None);
        assert_eq!((r.uid, r.gid), (5000, 0));
        assert_eq!(u.resolve_ids(&image, None, Some(3)).gid, 3);
    }
}
