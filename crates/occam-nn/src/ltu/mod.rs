//! Linear threshold units (thesis ch. 3).
