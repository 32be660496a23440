//! URLs as the crawler sees them: normalised for dedup, http(s) only, keyed by host for
//! politeness, and checked against an [`AddressPolicy`] before anything is fetched.
//!
//! Most of the normalisation is the WHATWG URL parser's own (the `url` crate): it lower-cases
//! the host (and turns IDNs to punycode), drops the scheme's default port and removes `.` and
//! `..` path segments. [`normalize`] adds what a crawler wants on top: http and https only, no
//! fragment, no empty query (`?`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Why a user-given URL cannot be crawled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("`{input}` is not a URL: {source}")]
    Parse {
        /// What was given.
        input: String,
        /// What the parser said.
        source: url::ParseError,
    },
    /// A URL, but not one that can be fetched over HTTP.
    #[error("`{input}`: only http and https URLs can be crawled, not `{scheme}:`")]
    Scheme {
        /// What was given.
        input: String,
        /// Its scheme.
        scheme: String,
    },
}

/// Resolves `href` against `base` and normalises it for the crawler: `None` unless the result
/// is an http or https URL. The fragment is dropped, and so is an empty query; the `url` crate
/// has already lower-cased the host, dropped a default port and collapsed `.`/`..` segments.
pub fn normalize(base: &Url, href: &str) -> Option<Url> {
    let url = base.join(href).ok()?;
    canonical(url)
}

/// [`normalize`] for a URL already parsed: `None` unless http or https.
pub fn canonical(mut url: Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return None;
    }
    if url.fragment().is_some() {
        url.set_fragment(None);
    }
    if url.query() == Some("") {
        url.set_query(None);
    }
    Some(url)
}

/// Parses a URL a user gave (a seed, a command-line argument): absolute, http or https, and
/// normalised as [`normalize`] does.
pub fn parse_url(s: &str) -> Result<Url, UrlError> {
    let input = s.trim();
    let url = Url::parse(input).map_err(|source| UrlError::Parse {
        input: input.to_string(),
        source,
    })?;
    let scheme = url.scheme().to_string();
    canonical(url).ok_or_else(|| UrlError::Scheme {
        input: input.to_string(),
        scheme,
    })
}

/// The politeness key of a URL: `host:port`, the port explicit even when it is the default
/// (`example.com:443`), IPv6 hosts in brackets. URLs without a host give `""`.
pub fn host_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// Which addresses the crawler may connect to. The default refuses every address that is not
/// globally routable, so a page cannot point the crawler at the machine it runs on or at its
/// network (SSRF); tests and local corpora turn on what they need.
///
/// The unspecified address, multicast, broadcast and the reserved `240.0.0.0/4` are refused
/// whatever the flags say. IPv4 addresses written as IPv6 (`::ffff:a.b.c.d`, `::a.b.c.d` and
/// the NAT64 prefix `64:ff9b::/96`) are judged as the IPv4 address they carry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Allow `127.0.0.0/8` and `::1`.
    pub allow_loopback: bool,
    /// Allow private and shared ranges: `10/8`, `172.16/12`, `192.168/16`, `100.64/10`
    /// (carrier-grade NAT), `192.0.0/24`, the benchmarking `198.18/15`, the documentation
    /// ranges, and IPv6 unique-local `fc00::/7`, site-local `fec0::/10` and documentation
    /// `2001:db8::/32`.
    pub allow_private: bool,
    /// Allow `169.254/16` and `fe80::/10`.
    pub allow_link_local: bool,
}

impl AddressPolicy {
    /// A policy that allows loopback, private and link-local addresses (for tests and local
    /// corpora).
    pub fn allow_all() -> AddressPolicy {
        AddressPolicy {
            allow_loopback: true,
            allow_private: true,
            allow_link_local: true,
        }
    }

    /// Whether every flag is on, so that resolving a host to check its addresses is pointless.
    pub fn permits_all(&self) -> bool {
        self.allow_loopback && self.allow_private && self.allow_link_local
    }

    /// Whether the crawler may connect to `ip`.
    pub fn permits(&self, ip: IpAddr) -> bool {
        match ip {
            IpAddr::V4(v4) => self.permits_v4(v4),
            IpAddr::V6(v6) => match embedded_v4(v6) {
                Some(v4) => self.permits_v4(v4),
                None => self.permits_v6(v6),
            },
        }
    }

    /// For a URL whose host is an IP literal, whether it is permitted; `None` for a domain
    /// name (resolve it and check every address) or a URL without a host.
    pub fn permits_host(&self, url: &Url) -> Option<bool> {
        match url.host()? {
            Host::Domain(_) => None,
            Host::Ipv4(v4) => Some(self.permits(IpAddr::V4(v4))),
            Host::Ipv6(v6) => Some(self.permits(IpAddr::V6(v6))),
        }
    }

    fn permits_v4(&self, ip: Ipv4Addr) -> bool {
        let [a, b, c, _] = ip.octets();
        if a == 0 || ip.is_multicast() || ip.is_broadcast() || a >= 240 {
            return false;
        }
        if a == 127 {
            return self.allow_loopback;
        }
        if a == 169 && b == 254 {
            return self.allow_link_local;
        }
        let private = a == 10
            || (a == 172 && (16..32).contains(&b))
            || (a == 192 && b == 168)
            || (a == 100 && (64..128).contains(&b))
            || (a == 192 && b == 0 && c == 0)
            || (a == 198 && (b == 18 || b == 19))
            || (a == 192 && b == 0 && c == 2)
            || (a == 198 && b == 51 && c == 100)
            || (a == 203 && b == 0 && c == 113);
        !private || self.allow_private
    }

    fn permits_v6(&self, ip: Ipv6Addr) -> bool {
        let seg = ip.segments();
        if ip.is_unspecified() || ip.is_multicast() {
            return false;
        }
        if ip.is_loopback() {
            return self.allow_loopback;
        }
        if seg[0] & 0xffc0 == 0xfe80 {
            return self.allow_link_local;
        }
        let private = seg[0] & 0xfe00 == 0xfc00
            || seg[0] & 0xffc0 == 0xfec0
            || (seg[0] == 0x2001 && seg[1] == 0x0db8);
        !private || self.allow_private
    }
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped `::ffff:0:0/96`, the deprecated
/// IPv4-compatible `::/96` (but not `::` and `::1`) and NAT64 `64:ff9b::/96`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let seg = ip.segments();
    let tail = Ipv4Addr::new(
        (seg[6] >> 8) as u8,
        seg[6] as u8,
        (seg[7] >> 8) as u8,
        seg[7] as u8,
    );
    if seg[..6] == [0; 6] && seg[6] != 0 {
        return Some(tail);
    }
    (seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0]).then_some(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("http://Example.COM:80/a/b/c.html?x=1#top").unwrap()
    }

    #[test]
    fn normalises_what_a_crawler_needs() {
        let n = |href| normalize(&base(), href).map(|u| u.to_string());
        assert_eq!(
            n("d.html#frag").as_deref(),
            Some("http://example.com/a/b/d.html")
        );
        assert_eq!(
            n("./../x/./y?").as_deref(),
            Some("http://example.com/a/x/y")
        );
        assert_eq!(
            n("HTTPS://WWW.Example.com:443/p").as_deref(),
            Some("https://www.example.com/p")
        );
        assert_eq!(
            n("#only").as_deref(),
            Some("http://example.com/a/b/c.html?x=1")
        );
        assert_eq!(n("mailto:a@b.c"), None);
        assert_eq!(n("javascript:void(0)"), None);
        assert_eq!(n("ftp://example.com/"), None);
        assert_eq!(n("http://[::1"), None);
    }

    #[test]
    fn host_keys_carry_the_port() {
        assert_eq!(host_key(&base()), "example.com:80");
        let u = Url::parse("https://[::1]:8443/").unwrap();
        assert_eq!(host_key(&u), "[::1]:8443");
    }

    #[test]
    fn mapped_addresses_are_judged_as_ipv4() {
        let p = AddressPolicy::default();
        for ip in [
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "::ffff:169.254.1.1",
        ] {
            assert!(!p.permits(ip.parse().unwrap()), "{ip}");
        }
        assert!(p.permits("::ffff:93.184.216.34".parse().unwrap()));
    }
}
