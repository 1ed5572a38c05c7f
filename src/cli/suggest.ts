/** "Did you mean ...?" for names a person types (shared with the daemon's model hints). */
export { didYouMean, similar } from '../shared/suggest.js';
