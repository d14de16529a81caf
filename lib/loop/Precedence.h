// Operator precedence of the loop IR's text form, shared by its printer and parser.
#pragma once

namespace strata::loop::text {

// Levels, loosest first: an operand of an operator prints with parentheses when it is looser.
enum Prec { POr = 1, PAnd, PCmp, PAdd, PMul, PUnary, PPrimary };

} // namespace strata::loop::text
