//! Value parsers for the subcommands' numeric options: a value out of range is refused by
//! clap as it parses the command line (a usage error, exit 2, naming the option), before
//! any work starts.

use std::fmt::Display;
use std::str::FromStr;

/// A number from `low` to `high`, both included (NaN is neither).
pub(crate) fn within<T>(text: &str, low: T, high: T) -> Result<T, String>
where
    T: FromStr + PartialOrd + Display,
{
    let value: T = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if value >= low && value <= high {
        Ok(value)
    } else {
        Err(format!("{value} is not between {low} and {high}"))
    }
}

/// A share or a cosine: from 0 to 1.
pub(crate) fn unit<T>(text: &str) -> Result<T, String>
where
    T: FromStr + PartialOrd + From<u8> + Display,
{
    within(text, T::from(0), T::from(1))
}

/// A number of hours a simulated listing runs: over 0, at most two weeks.
pub(crate) fn hours(text: &str) -> Result<f64, String> {
    positive_up_to(text, 24.0 * 14.0)
}

/// A duration in minutes: over 0, at most a day.
pub(crate) fn minutes(text: &str) -> Result<f64, String> {
    positive_up_to(text, 24.0 * 60.0)
}

/// A duration in seconds: over 0, at most a day.
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    positive_up_to(text, 86_400.0)
}

/// A duration in seconds, at most a day, where 0 turns something off.
pub(crate) fn seconds_or_off(text: &str) -> Result<f64, String> {
    within(text, 0.0, 86_400.0)
}

/// A finite number over 0: a rate or a factor.
pub(crate) fn positive(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("{value} is not a finite number over 0"))
    }
}

/// A number over 0 and at most `high` (NaN is not).
fn positive_up_to(text: &str, high: f64) -> Result<f64, String> {
    let value = within(text, 0.0, high)?;
    if value > 0.0 {
        Ok(value)
    } else {
        Err(format!("{value} is not over 0"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_take_their_ends_and_refuse_the_rest() {
        assert_eq!(unit::<f64>("0"), Ok(0.0));
        assert_eq!(unit::<f64>("1"), Ok(1.0));
        assert_eq!(
            unit::<f64>("1.5"),
            Err("1.5 is not between 0 and 1".to_owned())
        );
        assert_eq!(
            unit::<f32>("NaN"),
            Err("NaN is not between 0 and 1".to_owned())
        );
        assert_eq!(
            unit::<f32>("half"),
            Err("`half` is not a number".to_owned())
        );
        assert_eq!(hours("336"), Ok(336.0));
        assert_eq!(hours("0"), Err("0 is not over 0".to_owned()));
        assert_eq!(hours("337"), Err("337 is not between 0 and 336".to_owned()));
        assert_eq!(seconds("0.5"), Ok(0.5));
        assert_eq!(positive("20"), Ok(20.0));
        assert_eq!(
            positive("-1"),
            Err("-1 is not a finite number over 0".to_owned())
        );
        assert_eq!(
            positive("inf"),
            Err("inf is not a finite number over 0".to_owned())
        );
        assert_eq!(
            seconds("inf"),
            Err("inf is not between 0 and 86400".to_owned())
        );
    }
}
