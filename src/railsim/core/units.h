// Human units at railsim's edges: "400Gbps", "50GB/s", "80GiB", "989TFLOPS",
// "1MiB", "5us". Inside the code every quantity is an SI double with its unit
// in the variable name (nic_bw_Bps, time_s); these functions convert at the
// boundary, in both directions.
//
// Parsing is strict: a number (decimal or exponent form), optional spaces, and
// one of the suffixes listed for the quantity; 'b' means bit and 'B' byte.
// A bare number is taken in the SI base unit (bytes, bytes/s, FLOP/s, s).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace railsim::units {

/// Bytes per second from "400Gbps", "400Gb/s", "50GB/s", "50GBps", "1.5TiB/s".
/// Throws Error(where, ...) on an unknown suffix, a malformed or non-finite
/// number. Sign is not checked here; callers validate ranges.
double ParseBandwidth(std::string_view text, const std::string& where);

/// Bytes from "80GiB", "80GB", "1MiB", "512B".
double ParseBytes(std::string_view text, const std::string& where);

/// FLOP per second from "989TFLOPS", "312 TFLOP/s", "2.5PFLOPS".
double ParseFlopRate(std::string_view text, const std::string& where);

/// Seconds from "5us", "1.5ms", "2s", "100ns", "30min", "4h", "2d" ("µs" is
/// accepted too).
double ParseDuration(std::string_view text, const std::string& where);

/// A plain finite number with no suffix.
double ParseNumber(std::string_view text, const std::string& where);

/// Canonical forms, chosen so that parsing them gives the value back:
/// "400Gbps", "450GB/s", "80GiB", "989TFLOPS", "5us".
std::string FormatBitRate(double bytes_per_s);
std::string FormatByteRate(double bytes_per_s);
std::string FormatBytes(double bytes);
std::string FormatFlopRate(double flop_per_s);
std::string FormatDuration(double seconds);
/// 32768 -> "32,768".
std::string Grouped(int64_t value);

}  // namespace railsim::units
