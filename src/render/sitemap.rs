//! `sitemap.xml`, with each page's language alternates, and `robots.txt`.
//!
//! A build never reads the clock: the only date, `<lastmod>`, comes from
//! `SOURCE_DATE_EPOCH` when the command line passes it, and is left out
//! otherwise.

use super::escape::escape;
use crate::diagnostics::{rule, Diagnostic};

/// The variable that fixes the date of a reproducible build.
pub const SOURCE_DATE_EPOCH: &str = "SOURCE_DATE_EPOCH";

/// One URL of the sitemap with the same document in every language that
/// has it.
pub struct Entry {
    /// Absolute URL.
    pub loc: String,
    /// `(hreflang, absolute URL)`, `x-default` included.
    pub alternates: Vec<(String, String)>,
}

/// The date of `SOURCE_DATE_EPOCH` (`2024-05-31`), `None` when it is not
/// set (or empty), and a finding when it is not a whole number of seconds.
pub fn source_date(value: Option<&str>) -> Result<Option<String>, Diagnostic> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    // A sitemap's W3C date has a four-digit year: 1970-01-01 (0) up to
    // 9999-12-31.
    const LAST: i64 = 253_402_300_799;
    match value.trim().parse::<i64>() {
        Ok(secs) if (0..=LAST).contains(&secs) => Ok(Some(civil_date(secs))),
        Ok(_) => Err(Diagnostic::new(
            rule::SOURCE_DATE_INVALID,
            format!("{SOURCE_DATE_EPOCH} is `{value}`, which is not a date from 1970 to 9999, as a sitemap's dates must be"),
        )),
        Err(_) => Err(Diagnostic::new(
            rule::SOURCE_DATE_INVALID,
            format!("{SOURCE_DATE_EPOCH} is `{value}`, which is not a number of seconds"),
        )),
    }
}

/// The UTC calendar date of a Unix time, in the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`).
pub fn civil_date(secs: i64) -> String {
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The sitemap of `entries`, in their order.
pub fn sitemap(entries: &[Entry], lastmod: Option<&str>) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" \
         xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n",
    );
    for e in entries {
        xml.push_str("  <url>\n    <loc>");
        xml.push_str(&escape(&e.loc));
        xml.push_str("</loc>\n");
        if let Some(date) = lastmod {
            xml.push_str(&format!("    <lastmod>{date}</lastmod>\n"));
        }
        for (lang, href) in &e.alternates {
            xml.push_str(&format!(
                "    <xhtml:link rel=\"alternate\" hreflang=\"{}\" href=\"{}\"/>\n",
                escape(lang),
                escape(href)
            ));
        }
        xml.push_str("  </url>\n");
    }
    xml.push_str("</urlset>\n");
    xml
}

/// A sitemap index: the sitemaps at `locs` (absolute URLs), in order.
/// (One sitemap may list at most 50,000 URLs; fifty docs versions of a
/// few hundred pages in four languages are more.)
pub fn index(locs: &[String], lastmod: Option<&str>) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for loc in locs {
        xml.push_str("  <sitemap>\n    <loc>");
        xml.push_str(&escape(loc));
        xml.push_str("</loc>\n");
        if let Some(date) = lastmod {
            xml.push_str(&format!("    <lastmod>{date}</lastmod>\n"));
        }
        xml.push_str("  </sitemap>\n");
    }
    xml.push_str("</sitemapindex>\n");
    xml
}

/// `robots.txt`: everything may be crawled; the sitemap is at `sitemap`.
pub fn robots(sitemap: &str) -> String {
    format!("User-agent: *\nAllow: /\n\nSitemap: {sitemap}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_come_from_the_epoch() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(951_782_400), "2000-02-29");
        assert_eq!(civil_date(1_717_200_000), "2024-06-01");
        assert_eq!(civil_date(-86_400), "1969-12-31");
        assert_eq!(source_date(None).unwrap(), None);
        assert_eq!(
            source_date(Some("86399")).unwrap().as_deref(),
            Some("1970-01-01")
        );
        assert!(source_date(Some("yesterday")).is_err());
    }

    #[test]
    fn the_sitemap_lists_alternates() {
        let xml = sitemap(
            &[Entry {
                loc: "https://x.org/es/a/".into(),
                alternates: vec![
                    ("es".into(), "https://x.org/es/a/".into()),
                    ("x-default".into(), "https://x.org/es/a/".into()),
                ],
            }],
            Some("2024-06-01"),
        );
        assert!(xml.contains("<loc>https://x.org/es/a/</loc>\n    <lastmod>2024-06-01</lastmod>"));
        assert!(xml.contains("hreflang=\"x-default\" href=\"https://x.org/es/a/\"/>"));
        assert!(!sitemap(&[], None).contains("lastmod"));
    }

    #[test]
    fn the_index_lists_sitemaps() {
        let xml = index(
            &[
                "https://x.org/sitemaps/1.0.xml".into(),
                "https://x.org/sitemaps/site.xml".into(),
            ],
            Some("2024-06-01"),
        );
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex "));
        assert!(xml.contains(
            "  <sitemap>\n    <loc>https://x.org/sitemaps/1.0.xml</loc>\n    <lastmod>2024-06-01</lastmod>\n  </sitemap>\n  <sitemap>\n    <loc>https://x.org/sitemaps/site.xml</loc>"
        ));
        assert!(!index(&[], None).contains("lastmod"));
    }
}
