//! A small two-topic website for the discovery tests: pages about ferrets and pages about
//! cooking, linked the way documentation sites are (chapter index pages, prev/next, a home
//! page that links everywhere, some cross-links between the topics).

/// Ferret pages (`/ferret-N.html`, N from 1).
pub const FERRETS: usize = 16;
/// Cooking pages (`/cooking-N.html`, N from 1).
pub const COOKING: usize = 48;

const FERRET_WORDS: [&str; 12] = [
    "ferret",
    "kit",
    "hob",
    "jill",
    "hammock",
    "musteline",
    "burrow",
    "polecat",
    "fur",
    "vaccination",
    "sleeping",
    "playful",
];
const COOKING_WORDS: [&str; 12] = [
    "recipe", "onion", "garlic", "simmer", "oven", "flour", "butter", "sauce", "bake", "pepper",
    "saucepan", "dough",
];

fn page(title: &str, body: &str, links: &[(String, String)]) -> String {
    let links: String = links
        .iter()
        .map(|(href, text)| format!("<li><a href=\"{href}\">{text}</a></li>"))
        .collect();
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><title>{title}</title></head>\
         <body><h1>{title}</h1><p>{body}</p><ul>{links}</ul></body></html>"
    )
}

fn words(vocabulary: &[&str], n: usize) -> String {
    (0..60)
        .map(|i| vocabulary[(i * 7 + n * 3) % vocabulary.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `path` is about ferrets.
#[allow(dead_code)] // The e2e tests judge by the server's log instead.
pub fn is_ferret(path: &str) -> bool {
    path.starts_with("/ferret")
}

/// The page at `path`, if the site has one.
pub fn get(path: &str) -> Option<String> {
    let home = ("/index.html".to_string(), "Home".to_string());
    if path == "/" || path == "/index.html" {
        let mut links = vec![
            ("/ferrets.html".to_string(), "Ferrets".to_string()),
            ("/cooking.html".to_string(), "Cooking".to_string()),
        ];
        links.extend((1..=COOKING).map(|n| (format!("/cooking-{n}.html"), format!("Recipe {n}"))));
        return Some(page("A site about many things", "Welcome.", &links));
    }
    if path == "/ferrets.html" {
        let mut links = vec![home];
        links.extend(
            (1..=FERRETS).map(|n| (format!("/ferret-{n}.html"), format!("Ferret care {n}"))),
        );
        return Some(page("Ferrets", &words(&FERRET_WORDS, 0), &links));
    }
    if path == "/cooking.html" {
        let mut links = vec![home];
        links.extend((1..=COOKING).map(|n| (format!("/cooking-{n}.html"), format!("Recipe {n}"))));
        return Some(page("Cooking", &words(&COOKING_WORDS, 0), &links));
    }
    let number = |prefix: &str| -> Option<usize> {
        path.strip_prefix(prefix)?
            .strip_suffix(".html")?
            .parse()
            .ok()
    };
    if let Some(n) = number("/ferret-").filter(|n| (1..=FERRETS).contains(n)) {
        let mut links = vec![home, ("/ferrets.html".into(), "Up".into())];
        if n > 1 {
            links.push((format!("/ferret-{}.html", n - 1), "Prev".into()));
        }
        if n < FERRETS {
            links.push((format!("/ferret-{}.html", n + 1), "Next".into()));
        }
        // Cross-links to the other topic, as real pages have.
        links.push((
            format!("/cooking-{}.html", n * 3),
            format!("Recipe {}", n * 3),
        ));
        links.push((
            format!("/cooking-{}.html", n * 3 - 1),
            format!("Recipe {}", n * 3 - 1),
        ));
        return Some(page(
            &format!("Ferret care {n}"),
            &words(&FERRET_WORDS, n),
            &links,
        ));
    }
    if let Some(n) = number("/cooking-").filter(|n| (1..=COOKING).contains(n)) {
        let mut links = vec![home, ("/cooking.html".into(), "Up".into())];
        if n > 1 {
            links.push((format!("/cooking-{}.html", n - 1), "Prev".into()));
        }
        if n < COOKING {
            links.push((format!("/cooking-{}.html", n + 1), "Next".into()));
        }
        return Some(page(
            &format!("Recipe {n}"),
            &words(&COOKING_WORDS, n),
            &links,
        ));
    }
    None
}
