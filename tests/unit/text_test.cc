#define BOOST_TEST_MODULE text
#include "format/text.h"

#include <boost/test/unit_test.hpp>
#include <string>

using namespace portcullis::text;

BOOST_AUTO_TEST_CASE(accepts_well_formed_text) {
  for (std::string ok : {"", "plain", "Caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x94\x92 lock",
                         "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf"}) {
    BOOST_TEST(is_valid_utf8(ok), ok);
  }
  BOOST_TEST(utf8_length("Caf\xc3\xa9") == 4u);
  BOOST_TEST(utf8_length("\xf0\x9f\x94\x92") == 1u);
}

BOOST_AUTO_TEST_CASE(refuses_malformed_text) {
  for (std::string bad : {"\x80",              // a lone continuation byte
                          "\xc3",              // truncated
                          "\xe2\x82",          // truncated
                          "\xc0\xaf",          // overlong '/'
                          "\xe0\x80\xaf",      // overlong
                          "\xf0\x80\x80\xaf",  // overlong
                          "\xed\xa0\x80",      // a surrogate
                          "\xf4\x90\x80\x80",  // above U+10FFFF
                          "\xff", "a\xc3(b"}) {
    BOOST_TEST(!is_valid_utf8(bad));
  }
}

BOOST_AUTO_TEST_CASE(control_characters_are_found) {
  BOOST_TEST(!has_control_characters("A name: with punctuation & \xc3\xa9"));
  BOOST_TEST(has_control_characters("line\nbreak"));
  BOOST_TEST(has_control_characters(std::string("nul\0x", 5)));
  BOOST_TEST(has_control_characters("del\x7f"));
  BOOST_TEST(has_control_characters("c1\xc2\x85"));  // NEL
  BOOST_TEST(!has_control_characters("\xc2\xa0"));   // no-break space is text
}

BOOST_AUTO_TEST_CASE(display_text_problems_are_named) {
  BOOST_TEST(!display_text_problem("Todo app", 200).has_value());
  BOOST_TEST(!display_text_problem("\xc3\xa9\xc3\xa9", 2).has_value());  // characters, not bytes
  BOOST_TEST(display_text_problem("\xc3\xa9\xc3\xa9\xc3\xa9", 2).value_or("") ==
             "is longer than 2 characters");
  BOOST_TEST(display_text_problem("\xff", 200).value_or("") == "is not valid UTF-8");
  BOOST_TEST(display_text_problem("a\tb", 200).value_or("") ==
             "must not contain control characters");
}

BOOST_AUTO_TEST_CASE(printable_ascii_excludes_space_backslash_and_non_ascii) {
  BOOST_TEST(is_printable_ascii("https://a.example/x?y=1#z"));
  BOOST_TEST(is_printable_ascii(""));
  BOOST_TEST(!is_printable_ascii("a b"));
  BOOST_TEST(!is_printable_ascii("a\\b"));
  BOOST_TEST(!is_printable_ascii("caf\xc3\xa9"));
  BOOST_TEST(!is_printable_ascii("a\x7f"));
}
