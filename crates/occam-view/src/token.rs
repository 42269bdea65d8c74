//! The session token: 128 bits from the operating system's generator (not a model's random
//! choice, so no seed: a token that could be replayed from a seed would guard nothing).

use rand::rngs::OsRng;
use rand::TryRngCore;

/// A fresh token: 32 hex digits.
pub fn fresh() -> occam::Result<String> {
    let mut bytes = [0u8; 16];
    OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| occam::Error::Run(format!("cannot draw a token from the OS: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `given` equals `token`, in time independent of where they differ.
pub fn matches(given: &str, token: &str) -> bool {
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_32_hex_digits_and_differ() {
        let (a, b) = (fresh().unwrap(), fresh().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(matches(&a, &a));
        assert!(!matches(&a, &b));
        assert!(!matches(&a[..31], &a));
    }
}
